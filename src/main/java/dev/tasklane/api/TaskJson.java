package dev.tasklane.api;

import dev.tasklane.support.WireTime;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import dev.tasklane.queue.Task;
import org.jspecify.annotations.Nullable;

/**
 * A task exactly as the contract's Task JSON shows it. {@code leaseId} appears only where a
 * claim hands the task to its worker: it is what that worker names its calls with, and nobody
 * else's to see.
 */
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
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String leaseId,
        @Nullable String leaseExpiresAt,
        int timeoutSeconds,
        @Nullable String timeoutAt,
        Progress progress,
        @JsonRawValue @Nullable String result,
        @Nullable String lastError,
        @Nullable String idempotencyKey,
        @Nullable String concurrencyKey,
        int snoozes,
        int maxSnoozes) {

    /** Progress last reported by the task's handler or worker. */
    public record Progress(@Nullable Integer percent, @Nullable String message) {
    }

    /** The task as anyone may see it. */
    static TaskJson of(Task task) {
        return of(task, null);
    }

    /** The task as a claim hands it to the worker that now holds its lease. */
    static TaskJson claimed(Task task) {
        return of(task, task.leaseId() == null ? null : task.leaseId().toString());
    }

    private static TaskJson of(Task task, @Nullable String leaseId) {
        return new TaskJson(task.id(), task.queue(), task.type(), task.payload(), task.state().wireName(),
                task.priority(), task.attempt(), task.maxAttempts(), WireTime.format(task.runAt()),
                WireTime.format(task.createdAt()), WireTime.format(task.startedAt()),
                WireTime.format(task.finishedAt()), task.workerId(), leaseId, WireTime.format(task.leaseExpiresAt()),
                task.timeoutSeconds(), WireTime.format(task.timeoutAt()),
                new Progress(task.progressPercent(), task.progressMessage()), task.result(), task.lastError(),
                task.idempotencyKey(), task.concurrencyKey(), task.snoozes(), task.maxSnoozes());
    }
}
