package dev.tasklane.queue;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The tasks a bulk action ({@code POST /tasks/retry}, {@code /cancel}, {@code /delete}) applies
 * to: either {@code ids}, or a filter on one queue; at most {@code limit} of them.
 *
 * @param ids the tasks, 1..1000 of them; empty when a filter selects them
 * @param queue the queue the filter reads; null with ids
 * @param state only tasks in this state
 * @param type only tasks of this type
 * @param concurrencyKey only tasks with this key
 * @param schedule only tasks made by this schedule
 * @param createdBefore only tasks created before this
 * @param limit the most tasks the action looks at, 1..{@link #MAX_LIMIT}
 */
public record BulkSelection(List<Long> ids, @Nullable String queue, @Nullable TaskState state, @Nullable String type,
                            @Nullable String concurrencyKey, @Nullable String schedule,
                            @Nullable Instant createdBefore, int limit) {

    public static final int MAX_IDS = 1000;
    public static final int MAX_LIMIT = 100_000;

    public BulkSelection {
        ids = List.copyOf(ids);
        if (ids.isEmpty() == (queue == null)) {
            throw new IllegalArgumentException("select by ids or by a queue's filter, not both nor neither");
        }
        if (ids.size() > MAX_IDS || limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("at most " + MAX_IDS + " ids and a limit of 1.." + MAX_LIMIT);
        }
    }

    /** How many tasks an action changed, and how many it looked at and left alone. */
    public record Result(long count, long skipped) {

        Result plus(long changed, long lookedAt) {
            return new Result(count + changed, skipped + lookedAt - changed);
        }
    }
}
