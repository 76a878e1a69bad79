package dev.tasklane.worker;

import dev.tasklane.queue.Task;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A task this replica is running: its local view of the lease deadline, and the switch that
 * stops its handler when the task is cancelled or its lease is lost.
 */
final class RunningTask {

    private final Task task;
    private final Sinks.Empty<Void> stop = Sinks.empty();
    private volatile long leaseDeadlineNanos;
    private volatile String stopReason = "";

    RunningTask(Task task, long leaseDeadlineNanos) {
        this.task = task;
        this.leaseDeadlineNanos = leaseDeadlineNanos;
    }

    Task task() {
        return task;
    }

    /** The lease is known to last until {@code deadlineNanos} (System.nanoTime). */
    void leaseUntil(long deadlineNanos) {
        leaseDeadlineNanos = deadlineNanos;
    }

    boolean leaseLapsed(long nowNanos) {
        return nowNanos - leaseDeadlineNanos > 0;
    }

    void stop(String reason) {
        stopReason = reason;
        stop.tryEmitEmpty();
    }

    boolean stopped() {
        return !stopReason.isEmpty();
    }

    Mono<Void> whenStopped() {
        return stop.asMono();
    }
}
