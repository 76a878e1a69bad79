package dev.tasklane.client;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A task to enqueue. Build it with {@link #of(String, Object)} and the {@code with...} methods;
 * the unset fields take the service's defaults. {@code payload} is anything Jackson writes as
 * JSON.
 *
 * <p>{@code unique} and {@code debounce} are given as the service's JSON objects, for example
 * {@code Map.of("key", "doc-42", "scope", "waiting")}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NewTask(String type, Object payload, Integer priority, Instant runAt, Long delaySeconds,
                      Integer maxAttempts, String idempotencyKey, String concurrencyKey, Integer timeoutSeconds,
                      Integer maxSnoozes, Map<String, Object> unique, Map<String, Object> debounce) {

    public static NewTask of(String type) {
        return of(type, null);
    }

    public static NewTask of(String type, Object payload) {
        return new NewTask(type, payload, null, null, null, null, null, null, null, null, null, null);
    }

    public NewTask withPriority(int value) {
        return new NewTask(type, payload, value, runAt, delaySeconds, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    public NewTask withRunAt(Instant value) {
        return new NewTask(type, payload, priority, value, null, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    public NewTask withDelaySeconds(long value) {
        return new NewTask(type, payload, priority, null, value, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    public NewTask withMaxAttempts(int value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, value, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    /** The key that makes enqueues of this task idempotent; the client makes one up when unset. */
    public NewTask withIdempotencyKey(String value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, value, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    public NewTask withConcurrencyKey(String value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, idempotencyKey, value,
                timeoutSeconds, maxSnoozes, unique, debounce);
    }

    public NewTask withTimeoutSeconds(int value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, idempotencyKey, concurrencyKey,
                value, maxSnoozes, unique, debounce);
    }

    public NewTask withMaxSnoozes(int value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, value, unique, debounce);
    }

    public NewTask withUnique(Map<String, Object> value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, new LinkedHashMap<>(value), debounce);
    }

    public NewTask withDebounce(Map<String, Object> value) {
        return new NewTask(type, payload, priority, runAt, delaySeconds, maxAttempts, idempotencyKey, concurrencyKey,
                timeoutSeconds, maxSnoozes, unique, new LinkedHashMap<>(value));
    }
}
