package dev.tasklane.worker;

import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** The {@link TaskContext} of one in-process attempt. */
record AttemptContext(Task task, JsonNode payload, String workerId, TaskStore store) implements TaskContext {

    private static final Logger log = LoggerFactory.getLogger(AttemptContext.class);

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
    public int timeoutSeconds() {
        return task.timeoutSeconds();
    }

    /**
     * Best effort: a report the database cannot take now (it is away, or slow) is logged and
     * dropped rather than failing an attempt whose work went well; the lease keeper, not this
     * call, decides whether the attempt may go on.
     */
    @Override
    public Mono<Void> progress(@Nullable Integer percent, @Nullable String message) {
        return store.reportProgress(task.id(), workerId, task.leaseId(), percent, message).then()
                .onErrorResume(failure -> {
                    TaskLog.info(log, task, workerId, "Progress of task {} not recorded: {}", task.id(),
                            failure.toString());
                    return Mono.empty();
                });
    }
}
