package dev.tasklane.worker;

import dev.tasklane.queue.LeaseKey;
import dev.tasklane.queue.Task;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One in-process attempt this replica runs under a lease: the local deadlines of its lease and
 * of its timeout (monotonic nanoseconds of the {@link LeaseKeeper}'s clock, counted from before
 * the claim was sent, so that they never run later than the database's), and the switch that
 * stops its handler.
 */
final class Attempt {

    /** Why a handler was stopped. */
    enum Stop {
        /** The task was cancelled. */
        CANCELLED(true),
        /** A renewal found the lease gone (rescued, cancelled, or released elsewhere). */
        LEASE_LOST(true),
        /** No renewal succeeded in time: the lease may have expired, another worker may run the task. */
        LEASE_LAPSED(true),
        /** The replica released the task on shutdown. */
        RELEASED(true),
        /** The attempt ran out of time: its failure is still this worker's to record. */
        TIMED_OUT(false);

        private final boolean leaseGone;

        Stop(boolean leaseGone) {
            this.leaseGone = leaseGone;
        }
    }

    private final Task task;
    private final LeaseKey lease;
    private final long timeoutDeadlineNanos;
    private final Sinks.Empty<Void> stopped = Sinks.empty();
    private final Sinks.Empty<Void> leaseGone = Sinks.empty();
    private volatile long leaseDeadlineNanos;
    private volatile @Nullable Stop stop;

    Attempt(Task task, long leaseDeadlineNanos, long timeoutDeadlineNanos) {
        this.task = task;
        this.lease = LeaseKey.of(task);
        this.leaseDeadlineNanos = leaseDeadlineNanos;
        this.timeoutDeadlineNanos = timeoutDeadlineNanos;
    }

    Task task() {
        return task;
    }

    LeaseKey lease() {
        return lease;
    }

    /** The lease is known to last until {@code deadlineNanos}. */
    void leaseUntil(long deadlineNanos) {
        leaseDeadlineNanos = deadlineNanos;
    }

    /** Whether the lease ends within {@code marginNanos} of {@code nowNanos}, or has ended. */
    boolean leaseEndsWithin(long nowNanos, long marginNanos) {
        return nowNanos + marginNanos - leaseDeadlineNanos >= 0;
    }

    /** Whether the lease already runs (within {@code toleranceNanos}) until the attempt's timeout. */
    boolean leaseEndsWithTimeout(long toleranceNanos) {
        return leaseDeadlineNanos - (timeoutDeadlineNanos - toleranceNanos) >= 0;
    }

    boolean timedOut(long nowNanos) {
        return nowNanos - timeoutDeadlineNanos >= 0;
    }

    /** Stops the handler (once; the first reason stands) and, unless it timed out, gives up its outcome. */
    void stop(Stop reason) {
        synchronized (this) {
            if (stop == null) {
                stop = reason;
            } else if (!reason.leaseGone) {
                return;
            }
        }
        stopped.tryEmitEmpty();
        if (reason.leaseGone) {
            leaseGone.tryEmitEmpty();
        }
    }

    @Nullable Stop stopReason() {
        return stop;
    }

    /** Completes when the handler must stop. */
    Mono<Void> whenStopped() {
        return stopped.asMono();
    }

    /** Completes when the lease is gone: the attempt's outcome can no longer be recorded by this worker. */
    Mono<Void> whenLeaseGone() {
        return leaseGone.asMono();
    }
}
