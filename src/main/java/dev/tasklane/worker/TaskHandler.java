package dev.tasklane.worker;

import java.util.List;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Runs the tasks of one type in-process. Declare a bean of this type and tasks of that type on
 * every queue in {@code TASKLANE_WORKER_QUEUES} are claimed and run by it.
 *
 * <p>Delivery is at least once: an attempt whose replica dies, hangs or loses the database is
 * run again once its lease expires, so a handler must be idempotent (the task's id and attempt
 * are in the {@link TaskContext}). A handler must not block: it returns a {@link Mono}, which the
 * pipeline cancels when the task is cancelled or its lease is lost.
 */
public interface TaskHandler {

    /** The task type this handler runs. */
    String type();

    /**
     * Runs one attempt. The mono's value becomes the task's JSON result (empty: null); an error
     * fails the attempt, and it is retried with backoff unless it is a {@link PermanentTaskFailure}
     * or the attempts are used up.
     */
    Mono<?> handle(TaskContext context);

    /** Problems with a payload, checked at enqueue (each becomes a 422 error); none by default. */
    default List<String> validate(JsonNode payload) {
        return List.of();
    }
}
