package dev.tasklane.queue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Statements that lock many running tasks of one worker at once (lease renewal, recorded
 * outcomes, release on shutdown) run concurrently in a replica. Unless they lock in one order,
 * two of them deadlock, PostgreSQL aborts one, and its outcomes are lost until their leases run out.
 */
final class LockOrderIntegrationTests extends IntegrationTest {

    private static final String WORKER = "lock-order-worker";
    private static final Duration LEASE = Duration.ofSeconds(30);

    @Autowired
    private TaskStore store;

    @Test
    void renewingLeasesWhileOutcomesAreRecordedInAnyOrderNeverDeadlocks() {
        String queue = TaskFixtures.uniqueQueue("lock-order");
        int tasks = 2000;
        store.enqueue(queue, IntStream.range(0, tasks).mapToObj(i -> new NewTask("noop", null, 0, null, Duration.ZERO,
                NewTask.DEFAULT_MAX_ATTEMPTS, null, 7200)).toList()).block(Duration.ofSeconds(30));
        List<Task> running = new ArrayList<>(store.claim(new Claim(queue, WORKER, tasks, LEASE, Set.of()),
                UUID.randomUUID()).collectList().block(Duration.ofSeconds(30)));
        assertThat(running).hasSize(tasks);

        Random random = new Random(42);
        Collections.shuffle(running, random);
        int recorded = 0;
        while (!running.isEmpty()) {
            List<Task> finishing = List.copyOf(running.subList(0, Math.min(250, running.size())));
            List<LeaseKey> held = running.stream().map(LeaseKey::of).toList();
            List<Outcome> outcomes = finishing.stream().map(task -> Outcome.success(task, WORKER, null)).toList();

            long completed = Mono.zip(store.renewLeases(WORKER, held, LEASE).count(), store.complete(outcomes).count())
                    .map(counts -> counts.getT2())
                    .block(Duration.ofSeconds(30));

            assertThat(completed).isEqualTo(finishing.size());
            recorded += (int) completed;
            running.subList(0, finishing.size()).clear();
            Collections.shuffle(running, random);
        }
        assertThat(recorded).isEqualTo(tasks);
    }
}
