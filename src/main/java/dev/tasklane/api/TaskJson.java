package dev.tasklane.api;

import dev.tasklane.support.WireTime;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonRawValue;
import dev.tasklane.queue.Enqueued;
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
        int maxSnoozes,
        @Nullable String uniqueKey,
        @Nullable String schedule,
        @Nullable String scheduledFor,
        @Nullable String traceparent,
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Boolean deduplicated,
        @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Boolean debounced) {

    /** Progress last reported by the task's handler or worker. */
    public record Progress(@Nullable Integer percent, @Nullable String message) {
    }

    /** The task as anyone may see it. */
    static TaskJson of(Task task) {
        return of(task, null);
    }

    /** An item of a batch enqueue's answer: the task, marked when an existing one stood in for it. */
    static TaskJson enqueued(Enqueued result) {
        TaskJson json = of(result.task());
        return switch (result.how()) {
            case DEDUPLICATED -> json.marked(true, null);
            case DEBOUNCED -> json.marked(null, true);
            default -> json;
        };
    }

    private TaskJson marked(@Nullable Boolean deduplicated, @Nullable Boolean debounced) {
        return new TaskJson(id, queue, type, payload, state, priority, attempt, maxAttempts, runAt, createdAt,
                startedAt, finishedAt, workerId, leaseId, leaseExpiresAt, timeoutSeconds, timeoutAt, progress, result,
                lastError, idempotencyKey, concurrencyKey, snoozes, maxSnoozes, uniqueKey, schedule, scheduledFor,
                traceparent, deduplicated, debounced);
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
                task.idempotencyKey(), task.concurrencyKey(), task.snoozes(), task.maxSnoozes(),
                task.uniqueKey(), task.schedule(), WireTime.format(task.scheduledFor()),
                task.traceparent(), null, null);
    }
}
