package dev.tasklane.queue;

import java.time.Duration;
import java.util.Set;

/**
 * A request to claim due tasks from one queue.
 *
 * @param queue the queue
 * @param workerId who will hold the leases
 * @param limit how many at most
 * @param lease how long the leases last before they must be renewed (never past a task's timeout)
 * @param types only these types; empty means any type
 */
public record Claim(String queue, String workerId, int limit, Duration lease, Set<String> types) {

    /** The most types one claim may name: each costs the claim a seek per priority. */
    public static final int MAX_TYPES = 100;

    /** The most tasks one claim may take: their events are one batch, which holds at most 4,096 (V022). */
    public static final int MAX_LIMIT = 4096;

    public Claim {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be from 1 to " + MAX_LIMIT);
        }
        if (types.size() > MAX_TYPES) {
            throw new IllegalArgumentException("a claim names at most " + MAX_TYPES + " types");
        }
        types = Set.copyOf(types);
    }

    /** The same claim for at most {@code limit} tasks. */
    Claim withLimit(int limit) {
        return new Claim(queue, workerId, limit, lease, types);
    }
}
