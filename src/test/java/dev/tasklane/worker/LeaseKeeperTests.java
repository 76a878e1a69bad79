package dev.tasklane.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tasklane.queue.LeaseKey;
import dev.tasklane.queue.LeaseRenewal;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/** The lease keeper's timers on virtual time: lapse margins, renewal timeouts, timeouts, fencing by lease. */
final class LeaseKeeperTests {

    private static final Duration LEASE = Duration.ofSeconds(3); // renewals every 1 s, margin 0.6 s
    private static final Instant CLAIMED = Instant.parse("2026-12-03T10:00:00Z");

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private LeaseKeeper keeper;

    @AfterEach
    void stop() {
        if (keeper != null) {
            keeper.stop();
        }
        clock.dispose();
    }

    @Test
    void aHandlerIsStoppedAMarginBeforeItsLeaseEndsWhileRenewalsGoUnanswered() {
        keeper = started((leases, lease) -> Flux.never());
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofHours(1)), now());

        clock.advanceTimeBy(Duration.ofMillis(2300));
        assertThat(attempt.stopReason()).isNull();
        clock.advanceTimeBy(Duration.ofMillis(200));
        assertThat(attempt.stopReason()).isEqualTo(Attempt.Stop.LEASE_LAPSED);
    }

    @Test
    void aRenewalThatHangsTimesOutAndTheNextOneStillExtendsTheLease() {
        AtomicInteger calls = new AtomicInteger();
        keeper = started((leases, lease) -> calls.incrementAndGet() == 1 ? Flux.never()
                : Flux.fromIterable(leases).map(key -> new LeaseRenewal(key.taskId(), key.leaseId(), lease)));
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofHours(1)), now());

        clock.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(calls.get()).isGreaterThanOrEqualTo(5);
        assertThat(attempt.stopReason()).isNull();
    }

    @Test
    void aRenewalThatThrowsBeforeItIsSentFailsOnlyItsOwnRound() {
        AtomicInteger calls = new AtomicInteger();
        keeper = started((leases, lease) -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("a statement that could not be built");
            }
            return Flux.fromIterable(leases).map(key -> new LeaseRenewal(key.taskId(), key.leaseId(), lease));
        });
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofHours(1)), now());

        clock.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(calls.get()).isGreaterThanOrEqualTo(5);
        assertThat(attempt.stopReason()).isNull();
    }

    @Test
    void aStopWhoseWaiterThrowsLeavesTheDeadlineChecksOfTheOthersRunning() {
        keeper = started((leases, lease) -> Flux.never());
        Attempt failing = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofSeconds(1)), now());
        Attempt later = keeper.track(task(2, UUID.randomUUID(), LEASE, Duration.ofHours(1)), now());
        failing.whenStopped().subscribe(new BaseSubscriber<Void>() {
            @Override
            protected void hookOnComplete() {
                throw new IllegalStateException("a waiter that fails");
            }
        });

        clock.advanceTimeBy(Duration.ofMillis(1100));
        assertThat(failing.stopReason()).isEqualTo(Attempt.Stop.TIMED_OUT);
        clock.advanceTimeBy(Duration.ofMillis(1400));
        assertThat(later.stopReason()).isEqualTo(Attempt.Stop.LEASE_LAPSED);
        assertThat(keeper.stop(new LeaseKey(1, failing.lease().leaseId()), Attempt.Stop.CANCELLED)).isTrue();
    }

    @Test
    void everyTaskOfOneClaimIsRenewedUnderTheLeaseTheyShare() {
        keeper = started((leases, lease) -> Flux.fromIterable(leases)
                .map(key -> new LeaseRenewal(key.taskId(), key.leaseId(), lease)));
        UUID claim = UUID.randomUUID();
        Attempt one = keeper.track(task(1, claim, LEASE, Duration.ofHours(1)), now());
        Attempt two = keeper.track(task(2, claim, LEASE, Duration.ofHours(1)), now());

        clock.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(one.stopReason()).isNull();
        assertThat(two.stopReason()).isNull();
    }

    @Test
    void aLeaseTheDatabaseNoLongerGrantsStopsItsHandlerAsLost() {
        keeper = started((leases, lease) -> Flux.empty());
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofHours(1)), now());

        clock.advanceTimeBy(Duration.ofMillis(1100));
        assertThat(attempt.stopReason()).isEqualTo(Attempt.Stop.LEASE_LOST);
    }

    @Test
    void anAttemptStopsAtItsTimeoutAndNotAMarginBefore() {
        // the lease reaches the timeout: a renewal extends it only up to there, as the database does
        keeper = started((leases, lease) -> Flux.fromIterable(leases).map(key -> new LeaseRenewal(key.taskId(),
                key.leaseId(), Duration.ofSeconds(2).minusNanos(now()))));
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), Duration.ofSeconds(2), Duration.ofSeconds(2)), now());

        clock.advanceTimeBy(Duration.ofMillis(1850));
        assertThat(attempt.stopReason()).isNull();
        clock.advanceTimeBy(Duration.ofMillis(200));
        assertThat(attempt.stopReason()).isEqualTo(Attempt.Stop.TIMED_OUT);
    }

    @Test
    void deadlinesCountFromWhenTheClaimWasSentNotWhenItReturned() {
        keeper = started((leases, lease) -> Flux.never());
        long sent = now();
        clock.advanceTimeBy(Duration.ofMillis(1000)); // the claim took a second to come back
        Attempt attempt = keeper.track(task(1, UUID.randomUUID(), LEASE, Duration.ofHours(1)), sent);

        clock.advanceTimeBy(Duration.ofMillis(1500)); // 2.5 s after the claim was sent
        assertThat(attempt.stopReason()).isEqualTo(Attempt.Stop.LEASE_LAPSED);
    }

    @Test
    void stoppingOneLeaseLeavesALaterLeaseOfTheSameTaskRunning() {
        keeper = started((leases, lease) -> Flux.fromIterable(leases)
                .map(key -> new LeaseRenewal(key.taskId(), key.leaseId(), lease)));
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        Attempt old = keeper.track(task(7, first, LEASE, Duration.ofHours(1)), now());
        Attempt current = keeper.track(task(7, second, LEASE, Duration.ofHours(1)), now());

        assertThat(keeper.stop(new LeaseKey(7, first), Attempt.Stop.CANCELLED)).isTrue();
        keeper.untrack(old);
        clock.advanceTimeBy(Duration.ofSeconds(10));

        assertThat(old.stopReason()).isEqualTo(Attempt.Stop.CANCELLED);
        assertThat(current.stopReason()).isNull();
        assertThat(keeper.size()).isEqualTo(1);
        assertThat(keeper.stop(new LeaseKey(7, second), Attempt.Stop.CANCELLED)).isTrue();
        assertThat(current.stopReason()).isEqualTo(Attempt.Stop.CANCELLED);
    }

    private LeaseKeeper started(LeaseKeeper.Renewals renewals) {
        LeaseKeeper started = new LeaseKeeper(renewals, LEASE, clock);
        started.start();
        return started;
    }

    private long now() {
        return clock.now(TimeUnit.NANOSECONDS);
    }

    private static Task task(long id, UUID leaseId, Duration lease, Duration timeout) {
        return new Task(id, "q", "t", null, TaskState.RUNNING, 0, 1, 5, CLAIMED, CLAIMED, CLAIMED, null, "w",
                leaseId, CLAIMED.plus(lease), (int) timeout.toSeconds(), CLAIMED.plus(timeout), null, null, null, null,
                null, null, 0, 100, null, null, null, null);
    }
}
