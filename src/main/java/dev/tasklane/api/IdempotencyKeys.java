package dev.tasklane.api;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.tasklane.queue.NewTask;
import dev.tasklane.support.StorableText;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Idempotency-Key} header of an enqueue: the same key as {@code idempotencyKey} in the
 * body, for clients (and proxies) that set it per request. A write whose outcome is unknown
 * (503, {@code "outcome": "unknown"}) is safe to retry only with its key, so setting it must cost
 * a client nothing more than a header.
 */
final class IdempotencyKeys {

    private IdempotencyKeys() {
    }

    /** The header's key, checked as the body's is; null when the header is absent. */
    static @Nullable String header(@Nullable String value) {
        if (value == null) {
            return null;
        }
        if (value.isEmpty() || value.length() > EnqueueRequests.MAX_KEY_LENGTH || !StorableText.isStorable(value)) {
            throw new InvalidRequestException(TaskController.IDEMPOTENCY_KEY_HEADER,
                    "must be 1 to " + EnqueueRequests.MAX_KEY_LENGTH + " characters that PostgreSQL can store");
        }
        return value;
    }

    /** The task with the header's key; the body's key, if any, must be the same. */
    static NewTask apply(@Nullable String key, NewTask task) {
        if (key == null) {
            return task;
        }
        if (task.idempotencyKey() != null && !task.idempotencyKey().equals(key)) {
            throw new InvalidRequestException(TaskController.IDEMPOTENCY_KEY_HEADER,
                    "differs from the body's idempotencyKey; give one of them, or the same value in both");
        }
        return task.withIdempotencyKey(key);
    }

    /** Each task without a key of its own keyed {@code <key>:<position>}, so that a replayed batch makes nothing twice. */
    static List<NewTask> applyToBatch(@Nullable String key, List<NewTask> tasks) {
        if (key == null) {
            return tasks;
        }
        List<NewTask> keyed = new ArrayList<>(tasks.size());
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < tasks.size(); i++) {
            NewTask task = tasks.get(i);
            NewTask withKey = task.idempotencyKey() != null ? task : task.withIdempotencyKey(key + ":" + i);
            // an item's own key may be one the header derives for another item: both would be one task
            if (!seen.add(withKey.idempotencyKey())) {
                throw new InvalidRequestException("tasks[" + i + "].idempotencyKey",
                        "is the key the Idempotency-Key header gives another item of this batch (<key>:<index>)");
            }
            keyed.add(withKey);
        }
        return List.copyOf(keyed);
    }
}
