package dev.tasklane.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import dev.tasklane.queue.Claim;
import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.NewTask;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/** One outcome the database refuses fails alone: its batch is split until it stands alone. */
final class BatchCompleterIntegrationTests extends IntegrationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Autowired
    private TaskStore store;
    @Autowired
    private ClaimHandoff handoff;

    @Test
    void anOutcomeTheDatabaseCannotStoreFailsItsTaskAloneAndEveryOtherOutcomeIsWritten() {
        String queue = TaskFixtures.uniqueQueue("unstorable");
        store.enqueue(queue, IntStream.range(0, 200).mapToObj(i -> new NewTask("t", null, 0, null, Duration.ZERO, 5,
                null, 60)).toList()).block(PATIENCE);
        List<Task> claimed = handoff.claim(store, new Claim(queue, "completer", 200, Duration.ofSeconds(60), Set.of()),
                () -> "unused").block(PATIENCE);
        assertThat(claimed).hasSize(200);
        Task poisoned = claimed.get(137);
        List<Outcome> outcomes = new ArrayList<>();
        for (Task task : claimed) {
            // "\u0000" is valid JSON that jsonb refuses: the whole statement would fail with it
            outcomes.add(Outcome.success(task, "completer", task == poisoned ? "{\"bytes\": \"a\\u0000b\"}"
                    : "{\"n\": " + task.id() + "}"));
        }
        BatchCompleter completer = new BatchCompleter(store.onWorkerPool());

        Flux.fromIterable(outcomes).flatMap(completer::submit, 200).then().block(PATIENCE);

        assertThat(Sql.column("SELECT state || ' ' || attempt FROM task WHERE queue = ? AND id <> ? GROUP BY 1",
                queue, poisoned.id())).containsExactly("succeeded 1");
        List<String> failed = Sql.column("SELECT state || ' ' || attempt || ' ' || last_error FROM task WHERE id = ?",
                poisoned.id());
        assertThat(failed.get(0)).startsWith("failed 1 the outcome could not be stored: ");
        assertThat(Sql.column("SELECT count(*) FROM task_event WHERE task_id = ? AND name = 'failed'", poisoned.id()))
                .containsExactly("1");
    }
}
