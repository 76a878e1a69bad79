package dev.tasklane.client;

import java.time.Instant;

import tools.jackson.databind.JsonNode;

/**
 * A task as the service describes it. {@code payload} and {@code result} are the JSON as given;
 * {@code traceparent} is the W3C trace context of the request that enqueued it, if any; fields the
 * service adds later are ignored.
 */
public record Task(long id, String queue, String type, JsonNode payload, String state, int priority, int attempt,
                   int maxAttempts, Instant runAt, Instant createdAt, Instant startedAt, Instant finishedAt,
                   String workerId, String leaseId, Instant leaseExpiresAt, int timeoutSeconds, Instant timeoutAt,
                   Progress progress, JsonNode result, String lastError, String idempotencyKey,
                   String concurrencyKey, int snoozes, int maxSnoozes, String uniqueKey, String schedule,
                   Instant scheduledFor, String traceparent, Boolean deduplicated, Boolean debounced) {

    /** Progress last reported by the task's handler or worker. */
    public record Progress(Integer percent, String message) {
    }

    /** True in {@code succeeded}, {@code failed} and {@code cancelled}. */
    public boolean isTerminal() {
        return "succeeded".equals(state) || "failed".equals(state) || "cancelled".equals(state);
    }
}
