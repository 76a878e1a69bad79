package dev.tasklane.bench;

/**
 * How big each measurement is.
 *
 * @param tasks tasks burned down (one replica, then two)
 * @param bulkBatch tasks per batch request
 * @param bulkInFlight batch requests in flight
 * @param singles single enqueue requests
 * @param singlesInFlight single enqueue requests in flight
 * @param pickups tasks enqueued one at a time into an idle queue
 * @param pickupsPerSecond the pace of those
 * @param idleSubscribers SSE subscribers held open on one replica
 * @param claimBacklog the large backlog the claim is measured against (the small one is 1,000)
 * @param concurrency the in-process concurrency of the burned-down queue
 * @param warmup tasks each replica works (and single enqueues it answers) in each warm-up round
 * @param maxWarmupRounds the most warm-up rounds, however busy the JIT still is
 */
public record Sizes(int tasks, int bulkBatch, int bulkInFlight, int singles, int singlesInFlight, int pickups,
                    int pickupsPerSecond, int idleSubscribers, int claimBacklog, int concurrency, int warmup,
                    int maxWarmupRounds) {

    /** The figures. */
    public static Sizes full() {
        return new Sizes(20_000, 1000, 4, 10_000, 16, 500, 50, 10_000, 1_000_000, 1000, 40_000, 6);
    }

    /** Enough of everything to prove the harness still works, in seconds. */
    public static Sizes smoke() {
        return new Sizes(400, 200, 2, 100, 16, 10, 50, 20, 2_000, 64, 400, 2);
    }
}
