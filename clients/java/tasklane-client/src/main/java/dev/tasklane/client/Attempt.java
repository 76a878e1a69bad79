package dev.tasklane.client;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One claimed task a {@link TasklaneWorker} runs: the local deadlines of its lease and of its
 * timeout (monotonic {@link System#nanoTime()}), the switch that stops its handler, and when the
 * handler has really ended.
 *
 * <p>The deadlines never run later than the service's: a heartbeat's lease is counted from
 * before the heartbeat was sent, and a claim's from before its answer could have left the
 * service ({@link #CLAIM_ANSWER_ALLOWANCE}; a long poll's claim is made just before its
 * answer, so counting from when the claim was sent would shorten the lease by the whole wait).
 * The timeout is the service's own ({@code timeoutAt - startedAt}, one clock), counted from the
 * same point, so clocks that disagree do not matter.
 */
final class Attempt {

    /** How long after the service claimed a task its answer is taken to arrive, at most. */
    static final Duration CLAIM_ANSWER_ALLOWANCE = Duration.ofMillis(250);

    /** Why a handler was stopped. */
    enum Stop {
        /** A heartbeat was answered 404 or 409: the task was cancelled, deleted, rescued or is another's. */
        LEASE_LOST,
        /** No heartbeat succeeded in time: the lease may expire before the next could renew it. */
        LEASE_LAPSED,
        /** The attempt reached its {@code timeoutAt}; the service fails it as timed out. */
        TIMED_OUT,
        /** The worker stopped and hands the task back. */
        HANDED_BACK
    }

    /** Where the handler is: a stop cancels it, but a blocking one ends only when its thread leaves it. */
    private enum Handler {
        WAITING, RUNNING, ENDED
    }

    private final Task task;
    /** Whether the attempt has a timeout: nanoTime may be any long, so no value can stand for "never". */
    private final boolean timesOut;
    private final long timeoutDeadline;
    private final Sinks.Empty<Void> stopped = Sinks.empty();
    private final Sinks.Empty<Void> ended = Sinks.empty();
    // What the worker does once the handler has ended (frees its slot); guarded by this.
    private @Nullable Runnable afterEnd;
    private volatile long leaseDeadline;
    private volatile Stop stop;
    private Handler handler = Handler.WAITING;
    private boolean produced;

    private Attempt(Task task, long basis, Duration lease) {
        this.task = task;
        this.timesOut = task.timeoutAt() != null && task.startedAt() != null;
        this.timeoutDeadline = timesOut ? basis + Duration.between(task.startedAt(), task.timeoutAt()).toNanos() : 0;
        this.leaseDeadline = capped(basis + (task.leaseExpiresAt() == null || task.startedAt() == null ? lease
                : Duration.between(task.startedAt(), task.leaseExpiresAt())).toNanos());
    }

    /**
     * A task one claim for {@code lease} handed out: the claim was sent at {@code sentNanos} and
     * answered at {@code answeredNanos}; the service claimed it in between.
     */
    static Attempt claimed(Task task, Duration lease, long sentNanos, long answeredNanos) {
        return new Attempt(task, Math.max(sentNanos, answeredNanos - CLAIM_ANSWER_ALLOWANCE.toNanos()), lease);
    }

    Task task() {
        return task;
    }

    /** A heartbeat sent at {@code sentNanos} renewed the lease for {@code lease}, never past the timeout. */
    void renewed(long sentNanos, Duration lease) {
        leaseDeadline = capped(sentNanos + lease.toNanos());
    }

    /**
     * Why the handler must stop at {@code nowNanos}, if it must: at the timeout (checked every
     * {@code checkEvery}, so the last check before it stops it), or when the lease ends within
     * {@code margin} unless it already runs to the timeout, which no heartbeat could extend.
     */
    Stop due(long nowNanos, Duration margin, Duration checkEvery) {
        if (timesOut && nowNanos + checkEvery.toNanos() - timeoutDeadline >= 0) {
            return Stop.TIMED_OUT;
        }
        long lease = leaseDeadline;
        if (!(timesOut && lease == timeoutDeadline) && nowNanos + margin.toNanos() - lease >= 0) {
            return Stop.LEASE_LAPSED;
        }
        return null;
    }

    /**
     * Stops the handler; the first reason stands. True if this call stopped it; false too once the
     * handler has produced its outcome, which is sent whatever comes after (its lease id fences
     * it, should the lease be gone by then).
     */
    boolean stop(Stop reason) {
        synchronized (this) {
            if (stop != null || produced) {
                return false;
            }
            stop = reason;
        }
        stopped.tryEmitEmpty();
        return true;
    }

    /** The handler produced its outcome: true unless it was stopped first, and then it is dropped. */
    synchronized boolean produced() {
        if (stop != null) {
            return false;
        }
        produced = true;
        return true;
    }

    /** Completes when the handler must stop. */
    Mono<Void> whenStopped() {
        return stopped.asMono();
    }

    /** Why the handler was stopped, or null. */
    Stop stopped() {
        return stop;
    }

    /** The handler may begin: false if it was given up before it did, and then it never will. */
    synchronized boolean handlerBegins() {
        if (handler != Handler.WAITING) {
            return false;
        }
        handler = Handler.RUNNING;
        return true;
    }

    /** A blocking handler's thread left it: it returned or threw. */
    void handlerEnded() {
        end(false);
    }

    /**
     * The handler's Mono ended (completed, failed or was cancelled): a reactive handler ended with
     * it, and a blocking one that has not begun never will. One that has ends on its thread.
     */
    void workEnded() {
        end(true);
    }

    /** Marks the handler ended (unless {@code unlessRunning} and its thread still runs it) and runs what waits for that. */
    private void end(boolean unlessRunning) {
        Runnable then;
        synchronized (this) {
            if (unlessRunning && handler == Handler.RUNNING) {
                return;
            }
            handler = Handler.ENDED;
            then = afterEnd;
            afterEnd = null;
        }
        ended.tryEmitEmpty();
        if (then != null) {
            then.run();
        }
    }

    /** Runs {@code action} once nothing of the handler runs any more: at once if that is so already. */
    void afterHandlerEnded(Runnable action) {
        synchronized (this) {
            if (handler != Handler.ENDED) {
                afterEnd = action;
                return;
            }
        }
        action.run();
    }

    /**
     * Completes when nothing of the handler runs any more: a stopped blocking handler that
     * ignores its interruption runs on, and its task is neither handed back nor its slot freed.
     */
    Mono<Void> whenHandlerEnded() {
        return ended.asMono();
    }

    private long capped(long deadline) {
        return timesOut && deadline - timeoutDeadline >= 0 ? timeoutDeadline : deadline;
    }
}
