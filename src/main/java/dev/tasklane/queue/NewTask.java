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
 * @param unique the uniqueness it asks for, or null
 * @param debounce the debounce it asks for, or null (never both)
 * @param origin the schedule and fire time that make it, or null
 * @param traceparent the W3C traceparent of the request that enqueues it, or null
 */
public record NewTask(String type, @Nullable String payload, int priority, @Nullable Instant runAt,
                      Duration delay, int maxAttempts, @Nullable String idempotencyKey, int timeoutSeconds,
                      @Nullable String concurrencyKey, int maxSnoozes, @Nullable Unique unique,
                      @Nullable Debounce debounce, @Nullable Origin origin, @Nullable String traceparent) {

    /** Which existing tasks with the same unique key make an enqueue answer with them instead. */
    public enum UniqueScope {
        /** One that has not started yet (queued, never claimed: a snooze does not make it waiting again). */
        WAITING,
        /** One that is not terminal. */
        ACTIVE,
        /** One created in the last {@code windowSeconds}, whatever its state. */
        WINDOW;

        public String wireName() {
            return name().toLowerCase();
        }
    }

    /**
     * @param key the unique key; null: a hash of the task's type and payload
     * @param scope which existing tasks count
     * @param windowSeconds for {@link UniqueScope#WINDOW}: how far back
     */
    public record Unique(@Nullable String key, UniqueScope scope, long windowSeconds) {
    }

    /**
     * @param key the debounce key
     * @param delay how long after the latest enqueue the task runs
     * @param maxDelay at most this long after the first enqueue; null: no bound
     */
    public record Debounce(String key, Duration delay, @Nullable Duration maxDelay) {
    }

    /** The schedule that makes a task, and the fire time it stands for. */
    public record Origin(String schedule, Instant scheduledFor) {
    }

    /** A task with a concurrency key and a snooze limit, without uniqueness, debounce or schedule. */
    public NewTask(String type, @Nullable String payload, int priority, @Nullable Instant runAt, Duration delay,
                   int maxAttempts, @Nullable String idempotencyKey, int timeoutSeconds,
                   @Nullable String concurrencyKey, int maxSnoozes) {
        this(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds, concurrencyKey,
                maxSnoozes, null, null, null, null);
    }

    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    public static final int MAX_TIMEOUT_SECONDS = 604_800;
    public static final int DEFAULT_MAX_SNOOZES = 100;
    public static final int MAX_SNOOZES = 10_000;

    /** A task without a concurrency key. */
    public NewTask(String type, @Nullable String payload, int priority, @Nullable Instant runAt, Duration delay,
                   int maxAttempts, @Nullable String idempotencyKey, int timeoutSeconds) {
        this(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds, null,
                DEFAULT_MAX_SNOOZES, null, null, null, null);
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
        if (unique != null && debounce != null) {
            throw new IllegalArgumentException("a task is unique or debounced, not both");
        }
        if (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
            throw new IllegalArgumentException("timeoutSeconds must be within 1.." + MAX_TIMEOUT_SECONDS);
        }
    }

    /** This task as made by a schedule for one fire time. */
    public NewTask madeBy(Origin origin) {
        return new NewTask(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds,
                concurrencyKey, maxSnoozes, unique, debounce, origin, traceparent);
    }

    /** This task as part of the trace {@code parent} (a W3C traceparent), or of none. */
    public NewTask tracedBy(@Nullable String parent) {
        return new NewTask(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds,
                concurrencyKey, maxSnoozes, unique, debounce, origin, parent);
    }

    /** This task with {@code key} as its idempotency key. */
    public NewTask withIdempotencyKey(String key) {
        return new NewTask(type, payload, priority, runAt, delay, maxAttempts, key, timeoutSeconds,
                concurrencyKey, maxSnoozes, unique, debounce, origin, traceparent);
    }

    /** This task with its unique key resolved. */
    NewTask withUnique(Unique resolved) {
        return new NewTask(type, payload, priority, runAt, delay, maxAttempts, idempotencyKey, timeoutSeconds,
                concurrencyKey, maxSnoozes, resolved, debounce, origin, traceparent);
    }

    /** Whether its enqueue must look at other tasks first (under the lock of its key). */
    public boolean guarded() {
        return unique != null || debounce != null;
    }
}
