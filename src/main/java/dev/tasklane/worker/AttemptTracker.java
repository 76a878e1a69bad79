package dev.tasklane.worker;

import dev.tasklane.queue.Task;

/** What a queue's pipeline may ask of the lease keeper: to keep (and stop) what it runs, and the time. */
interface AttemptTracker {

    /** The keeper's clock, in monotonic nanoseconds: read it before sending a claim. */
    long nanoTime();

    /** Keeps the lease of a task just claimed (the claim was sent at {@code claimSentNanos}). */
    Attempt track(Task task, long claimSentNanos);

    /** The attempt's outcome is written or given up: its lease needs no more keeping. */
    void untrack(Attempt attempt);
}
