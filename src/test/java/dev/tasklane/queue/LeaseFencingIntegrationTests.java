package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every outcome, renewal, progress report and release names the lease of one claim, so that the
 * answers of an earlier claim can never change the attempt of a later one: cancel, retry and a
 * new claim by the same worker reuse the task, the worker id and even the attempt number.
 */
final class LeaseFencingIntegrationTests extends IntegrationTest {

    private static final String WORKER = "fencing-worker";
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Autowired
    private TaskStore store;
    @Autowired
    private ClaimHandoff handoff;

    @Test
    void aLateOutcomeOfAnEarlierClaimIsRefusedAndTheNewLeaseStaysRenewableAndCancellable() {
        String queue = TaskFixtures.uniqueQueue("aba");
        long id = store.enqueue(queue, List.of(new NewTask("t", null, 0, null, Duration.ZERO, 5, null, 60)))
                .block(PATIENCE).get(0).task().id();
        Task first = claimOne(queue);
        store.cancel(id).block(PATIENCE);
        store.retry(id).block(PATIENCE);
        Task second = claimOne(queue);
        assertThat(second.attempt()).isEqualTo(first.attempt()); // retry reset it: the attempt cannot tell them apart
        assertThat(second.leaseId()).isNotEqualTo(first.leaseId());

        assertThat(store.complete(List.of(Outcome.success(first, WORKER, "1"))).collectList().block(PATIENCE)).isEmpty();
        assertThat(store.reportProgress(id, WORKER, first.leaseId(), 50, "late").blockOptional(PATIENCE)).isEmpty();
        assertThat(store.renewLeases(WORKER, List.of(LeaseKey.of(first)), LEASE).collectList().block(PATIENCE)).isEmpty();
        assertThat(store.releaseLeases(List.of(LeaseKey.of(first)), "late release").collectList().block(PATIENCE)).isEmpty();

        Task current = store.get(id).block(PATIENCE);
        assertThat(current.state()).isEqualTo(TaskState.RUNNING);
        assertThat(current.leaseId()).isEqualTo(second.leaseId());
        assertThat(store.renewLeases(WORKER, List.of(LeaseKey.of(second)), LEASE).collectList().block(PATIENCE))
                .extracting(LeaseRenewal::leaseId).containsExactly(second.leaseId());
        TaskStore.Cancelled cancelled = store.cancel(id).block(PATIENCE);
        assertThat(cancelled.previousLeaseId()).isEqualTo(second.leaseId());
    }

    @Test
    void aClaimWhoseCallerStoppedWaitingIsReleasedWithoutCountingTheAttempt() {
        String queue = TaskFixtures.uniqueQueue("abandoned");
        long id = store.enqueue(queue, List.of(new NewTask("t", null, 0, null, Duration.ZERO, 5, null, 60)))
                .block(PATIENCE).get(0).task().id();
        // Cancelled at once, before the statement can return: it runs to its end all the same.
        handoff.claim(store, new Claim(queue, WORKER, 1, LEASE, Set.of()), () -> "released: test gave up")
                .subscribe().dispose();
        org.awaitility.Awaitility.await().atMost(PATIENCE).until(() -> handoff.inFlight() == 0
                && store.get(id).block(PATIENCE).state() == TaskState.QUEUED
                && "released: test gave up".equals(store.get(id).block(PATIENCE).lastError()));
        Task released = store.get(id).block(PATIENCE);
        assertThat(released.attempt()).isZero();
        assertThat(released.leaseId()).isNull();
    }

    private Task claimOne(String queue) {
        List<Task> claimed = handoff.claim(store, new Claim(queue, WORKER, 1, LEASE, Set.of()), () -> "unused")
                .block(PATIENCE);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }
}
