package dev.tasklane.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.tasklane.queue.LeaseKey;
import dev.tasklane.queue.LeaseRenewal;
import dev.tasklane.queue.Task;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The in-process attempts of this replica, by lease: it renews their leases, stops a handler
 * whose lease it can no longer vouch for, and stops a handler at its timeout.
 *
 * <p>Three rules keep a lease from lying. Local deadlines are counted from before the claim (or
 * renewal) was sent, so they never end later than the database's. Renewals have a timeout, so a
 * connection that stops answering cannot hold the next one back. And the lapse check runs on a
 * timer of its own, apart from renewals: a handler whose lease ends within the safety margin is
 * stopped before another replica's rescuer can hand the task out again, whatever the database
 * connection is doing.
 */
final class LeaseKeeper implements AttemptTracker {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    private static final Duration MAX_MARGIN = Duration.ofSeconds(5);
    private static final Duration CHECK_EVERY = Duration.ofMillis(100);

    /** Renews the leases a worker holds; emits those still held, with their new remaining time. */
    interface Renewals {
        Flux<LeaseRenewal> renew(List<LeaseKey> leases, Duration lease);
    }

    private final Renewals renewals;
    private final Duration lease;
    private final Duration renewEvery;
    private final long marginNanos;
    private final Scheduler clock;
    private final Map<LeaseKey, Attempt> attempts = new ConcurrentHashMap<>();
    private volatile Disposable loops = Disposables.disposed();

    /**
     * @param renewals the statement that renews leases
     * @param lease how long each renewal extends a lease
     * @param clock the time of deadlines and the timers (a virtual one in tests)
     */
    LeaseKeeper(Renewals renewals, Duration lease, Scheduler clock) {
        this.renewals = renewals;
        this.lease = lease;
        this.renewEvery = lease.dividedBy(3);
        Duration margin = lease.dividedBy(5);
        this.marginNanos = (margin.compareTo(MAX_MARGIN) > 0 ? MAX_MARGIN : margin).toNanos();
        this.clock = clock;
    }

    @Override
    public long nanoTime() {
        return clock.now(TimeUnit.NANOSECONDS);
    }

    @Override
    public Attempt track(Task task, long claimSentNanos) {
        long leaseNanos = Duration.between(task.startedAt(), task.leaseExpiresAt()).toNanos();
        long timeoutNanos = task.timeoutAt() == null ? Long.MAX_VALUE / 2
                : Duration.between(task.startedAt(), task.timeoutAt()).toNanos();
        Attempt attempt = new Attempt(task, claimSentNanos + leaseNanos, claimSentNanos + timeoutNanos);
        attempts.put(attempt.lease(), attempt);
        return attempt;
    }

    @Override
    public void untrack(Attempt attempt) {
        attempts.remove(attempt.lease(), attempt);
    }

    int size() {
        return attempts.size();
    }

    boolean isEmpty() {
        return attempts.isEmpty();
    }

    /** Stops the attempt of one lease, if it runs here; true if it did. */
    boolean stop(LeaseKey lease, Attempt.Stop reason) {
        Attempt attempt = attempts.get(lease);
        if (attempt == null) {
            return false;
        }
        stopQuietly(attempt, reason);
        return true;
    }

    /** Stops every attempt still running here and returns their leases (a drain that ran out of time). */
    List<LeaseKey> stopAll(Attempt.Stop reason) {
        List<LeaseKey> leases = new ArrayList<>(attempts.keySet());
        leases.forEach(key -> stop(key, reason));
        return leases;
    }

    void start() {
        Disposable.Composite started = Disposables.composite();
        started.add(Flux.interval(renewEvery, renewEvery, clock)
                .onBackpressureDrop() // a slow round skips ticks instead of failing the loop
                .concatMap(tick -> renewAll(), 1)
                .subscribe());
        started.add(Flux.interval(CHECK_EVERY, CHECK_EVERY, clock)
                .onBackpressureDrop()
                .subscribe(tick -> checkDeadlines()));
        loops = started;
    }

    void stop() {
        loops.dispose();
    }

    /** One renewal of every lease held; a lease the database no longer grants stops its handler. */
    Mono<Void> renewAll() {
        if (attempts.isEmpty()) {
            return Mono.empty();
        }
        List<LeaseKey> held = new ArrayList<>(attempts.keySet());
        long sentAt = nanoTime();
        // Deferred: a renewal that throws before it returns fails this round only, never the loop.
        return Flux.defer(() -> renewals.renew(held, lease))
                .collectMap(renewal -> new LeaseKey(renewal.taskId(), renewal.leaseId()), LeaseRenewal::remaining)
                .timeout(renewEvery, clock)
                .doOnNext(granted -> {
                    for (LeaseKey key : held) {
                        Attempt attempt = attempts.get(key);
                        if (attempt == null) {
                            continue;
                        }
                        Duration remaining = granted.get(key);
                        if (remaining != null) {
                            attempt.leaseUntil(sentAt + remaining.toNanos());
                        } else {
                            stopQuietly(attempt, Attempt.Stop.LEASE_LOST);
                        }
                    }
                })
                .then()
                .onErrorResume(e -> {
                    log.warn("Renewing {} leases failed: {}", held.size(), e.toString());
                    return Mono.empty();
                });
    }

    /**
     * Stops handlers out of time, and those whose lease may end before a renewal could vouch for
     * it. A lease that already reaches the attempt's timeout (no renewal can extend it further)
     * ends the attempt at the timeout instead, not a margin before it.
     */
    void checkDeadlines() {
        if (attempts.isEmpty()) {
            return;
        }
        long now = nanoTime();
        for (Attempt attempt : attempts.values()) {
            if (attempt.timedOut(now)) {
                stopQuietly(attempt, Attempt.Stop.TIMED_OUT);
            } else if (attempt.leaseEndsWithin(now, marginNanos) && !attempt.leaseEndsWithTimeout(marginNanos)) {
                stopQuietly(attempt, Attempt.Stop.LEASE_LAPSED);
            }
        }
    }

    /**
     * Stops one attempt. Stopping runs whatever waits on it; should that throw, the failure is
     * logged here, so that it cannot end the loop that stops the others (the deadline checks, the
     * renewals, the subscription to other replicas' cancels).
     */
    private static void stopQuietly(Attempt attempt, Attempt.Stop reason) {
        try {
            attempt.stop(reason);
        } catch (RuntimeException e) {
            log.error("Stopping the attempt of task {} ({}) failed", attempt.task().id(), reason, e);
        }
    }
}
