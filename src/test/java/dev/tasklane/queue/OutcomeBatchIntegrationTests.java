package dev.tasklane.queue;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A batch of outcomes answers, for each task its worker still held, what the outcome left: the
 * state, when a task queued again comes due, and the run's start and end, as the table now holds
 * them (the pipeline's wake-ups and metrics read nothing else).
 */
final class OutcomeBatchIntegrationTests extends IntegrationTest {

    private static final String WORKER = "outcome-batch-worker";
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Autowired
    private TaskStore store;
    @Autowired
    private ClaimHandoff handoff;

    @Test
    void aBatchOfOutcomesAnswersWhatEachLeftOfItsTask() {
        String queue = TaskFixtures.uniqueQueue("outcome-batch");
        store.enqueue(queue, IntStream.range(0, 4).mapToObj(i -> new NewTask("t", "{\"n\": " + i + "}", 0, null,
                Duration.ZERO, 5, null, 60)).toList()).block(PATIENCE);
        List<Task> claimed = handoff.claim(store, new Claim(queue, WORKER, 4, Duration.ofSeconds(30), Set.of()),
                () -> "unused").block(PATIENCE).stream().sorted(Comparator.comparingLong(Task::id)).toList();
        assertThat(claimed).hasSize(4);
        Task stale = claimed.get(3);

        List<RecordedOutcome> recorded = store.complete(List.of(
                        Outcome.success(claimed.get(0), WORKER, "{\"ok\": true}"),
                        Outcome.failure(claimed.get(1), WORKER, "try again", true, Duration.ofSeconds(5)),
                        Outcome.snooze(claimed.get(2).id(), claimed.get(2).leaseId(), WORKER, Duration.ofSeconds(10),
                                Duration.ofSeconds(1)),
                        new Outcome(stale.id(), UUID.randomUUID(), WORKER, true, null, null, false, Duration.ZERO,
                                null)))
                .collectList().block(PATIENCE);

        // the fourth names a lease its worker does not hold: no answer for it
        assertThat(recorded).extracting(RecordedOutcome::id)
                .containsExactlyInAnyOrder(claimed.get(0).id(), claimed.get(1).id(), claimed.get(2).id());
        for (RecordedOutcome outcome : recorded) {
            Task stored = store.get(outcome.id()).block(PATIENCE);
            assertThat(outcome).isEqualTo(new RecordedOutcome(stored.id(), queue, "t", stored.state(), stored.runAt(),
                    stored.startedAt(), stored.finishedAt(), outcome.id() == claimed.get(2).id()));
        }
        RecordedOutcome succeeded = recorded.stream().filter(o -> o.id() == claimed.get(0).id()).findFirst().orElseThrow();
        assertThat(succeeded.state()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(succeeded.finishedAt()).isAfterOrEqualTo(succeeded.startedAt());
        RecordedOutcome retried = recorded.stream().filter(o -> o.id() == claimed.get(1).id()).findFirst().orElseThrow();
        assertThat(retried.state()).isEqualTo(TaskState.QUEUED);
        assertThat(retried.runAt()).isAfter(retried.startedAt().plusSeconds(4));
        RecordedOutcome snoozed = recorded.stream().filter(o -> o.id() == claimed.get(2).id()).findFirst().orElseThrow();
        assertThat(snoozed.state()).isEqualTo(TaskState.QUEUED);
        assertThat(snoozed.runAt()).isAfter(snoozed.startedAt().plusSeconds(9));
        assertThat(store.get(stale.id()).block(PATIENCE).state()).isEqualTo(TaskState.RUNNING);
    }
}
