package dev.tasklane.worker;

import java.time.Instant;
import java.util.List;

/**
 * One live worker, as {@code GET /api/v1/workers} lists it.
 *
 * @param id worker id (a replica's own, or what a pull worker calls itself)
 * @param kind {@code replica} or {@code pull}
 * @param queues the queues it works
 * @param inFlight tasks it runs now
 * @param startedAt first seen
 * @param lastSeenAt last heartbeat or call
 */
public record WorkerInfo(String id, String kind, List<String> queues, int inFlight, Instant startedAt,
                         Instant lastSeenAt) {

    public WorkerInfo {
        queues = List.copyOf(queues);
    }
}
