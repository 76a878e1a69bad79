package dev.tasklane.queue;

import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * One task as stored. {@code payload} and {@code result} are JSON text exactly as the database
 * returns it, so they pass through the service without being parsed again. {@code leaseId},
 * {@code timeoutAt} and {@code leaseExpiresAt} are set while it runs. {@code schedule} and
 * {@code scheduledFor} name the schedule and fire time that made it, if one did; {@code traceparent}
 * is the W3C trace context of the request that enqueued it, if it had one.
 */
public record Task(
        long id,
        String queue,
        String type,
        @Nullable String payload,
        TaskState state,
        int priority,
        int attempt,
        int maxAttempts,
        Instant runAt,
        Instant createdAt,
        @Nullable Instant startedAt,
        @Nullable Instant finishedAt,
        @Nullable String workerId,
        @Nullable UUID leaseId,
        @Nullable Instant leaseExpiresAt,
        int timeoutSeconds,
        @Nullable Instant timeoutAt,
        @Nullable Integer progressPercent,
        @Nullable String progressMessage,
        @Nullable String result,
        @Nullable String lastError,
        @Nullable String idempotencyKey,
        @Nullable String concurrencyKey,
        int snoozes,
        int maxSnoozes,
        @Nullable String uniqueKey,
        @Nullable String schedule,
        @Nullable Instant scheduledFor,
        @Nullable String traceparent) implements StateChange {
}
