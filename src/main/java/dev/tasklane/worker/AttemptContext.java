package dev.tasklane.worker;

import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** The {@link TaskContext} of one in-process attempt. */
record AttemptContext(Task task, JsonNode payload, String workerId, TaskStore store) implements TaskContext {

    @Override
    public long taskId() {
        return task.id();
    }

    @Override
    public int attempt() {
        return task.attempt();
    }

    @Override
    public int maxAttempts() {
        return task.maxAttempts();
    }

    @Override
    public String queue() {
        return task.queue();
    }

    @Override
    public String type() {
        return task.type();
    }

    @Override
    public Mono<Void> progress(@Nullable Integer percent, @Nullable String message) {
        return store.reportProgress(task.id(), workerId, task.attempt(), percent, message).then();
    }
}
