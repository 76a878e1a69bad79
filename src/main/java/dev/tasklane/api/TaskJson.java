package dev.tasklane.api;

import com.fasterxml.jackson.annotation.JsonRawValue;
import dev.tasklane.queue.Task;
import org.jspecify.annotations.Nullable;

/** A task exactly as the contract's Task JSON shows it. */
public record TaskJson(
        long id,
        String queue,
        String type,
        @JsonRawValue @Nullable String payload,
        String state,
        int priority,
        int attempt,
        int maxAttempts,
        String runAt,
        String createdAt,
        @Nullable String startedAt,
        @Nullable String finishedAt,
        @Nullable String workerId,
        @Nullable String leaseExpiresAt,
        Progress progress,
        @JsonRawValue @Nullable String result,
        @Nullable String lastError,
        @Nullable String idempotencyKey) {

    /** Progress last reported by the task's handler or worker. */
    public record Progress(@Nullable Integer percent, @Nullable String message) {
    }

    static TaskJson of(Task task) {
        return new TaskJson(task.id(), task.queue(), task.type(), task.payload(), task.state().wireName(),
                task.priority(), task.attempt(), task.maxAttempts(), WireTime.format(task.runAt()),
                WireTime.format(task.createdAt()), WireTime.format(task.startedAt()),
                WireTime.format(task.finishedAt()), task.workerId(), WireTime.format(task.leaseExpiresAt()),
                new Progress(task.progressPercent(), task.progressMessage()), task.result(), task.lastError(),
                task.idempotencyKey());
    }
}
