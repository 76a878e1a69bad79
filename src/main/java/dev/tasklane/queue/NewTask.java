package dev.tasklane.queue;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A task to enqueue, already validated by the caller.
 *
 * @param type task type
 * @param payload JSON text, or null for none
 * @param priority -100..100, higher runs first
 * @param runAt when it becomes due; null means {@code delay} after the database's now
 * @param delay used only when {@code runAt} is null
 * @param maxAttempts 1..100
 * @param idempotencyKey null for none
 * @param timeoutSeconds how long one attempt may run, 1..604800
 * @param concurrencyKey the group it belongs to for its queue's flow control; null for the group without a key
 * @param maxSnoozes how often it may snooze, 0..10000; past that a snooze fails the attempt
 */
public record NewTask(String type, @Nullable String payload, int priority, @Nullable Instant runAt,
                      Duration delay, int maxAttempts, @Nullable String idempotencyKey, int timeoutSeconds,
                      @Nullable String concurrencyKey, int maxSnoozes) {

    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    public static final int MAX_TIMEOUT_SECONDS = 604_800;
    public static final int DEFAULT_MAX_SNOOZES = 100;
    public static final int MAX_SNOOZES = 10_000;

    /** A task without a concurrency key. */
    public NewTask(String type, @Nullable String payload, int priority, @Nullable Instant runAt, Duration delay,
                   int maxAttempts, @Nullable String idempotencyKey, int timeoutSeconds) {
        this(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds, null,
                DEFAULT_MAX_SNOOZES);
    }

    public NewTask {
        if (priority < -100 || priority > 100) {
            throw new IllegalArgumentException("priority must be within -100..100");
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new IllegalArgumentException("maxAttempts must be within 1..100");
        }
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative");
        }
        if (maxSnoozes < 0 || maxSnoozes > MAX_SNOOZES) {
            throw new IllegalArgumentException("maxSnoozes must be within 0.." + MAX_SNOOZES);
        }
        if (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
            throw new IllegalArgumentException("timeoutSeconds must be within 1.." + MAX_TIMEOUT_SECONDS);
        }
    }
}
