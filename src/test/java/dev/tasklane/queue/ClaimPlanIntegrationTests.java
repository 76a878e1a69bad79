package dev.tasklane.queue;

import java.util.List;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim must cost the same with a million tasks waiting as with a thousand: its plan reads
 * the partial claim index in order and stops after the batch. (Timing it is the benchmark's job.)
 */
final class ClaimPlanIntegrationTests {

    @Test
    void withAMillionTasksWaitingTheClaimReadsThePartialIndexInClaimOrder() {
        String queue = TaskFixtures.uniqueQueue("million");
        Sql.update("INSERT INTO task (queue, type, priority, run_at) SELECT ?, 'noop', (g % 7) - 3,"
                + " now() - (g % 1000) * interval '1 second' FROM generate_series(1, 1000000) g", queue);
        Sql.update("ANALYZE task");
        String claimSelect = """
                EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT)
                SELECT id FROM task
                WHERE queue = ? AND state = 'queued' AND run_at <= now()
                  AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = ? AND q.paused)
                ORDER BY priority DESC, run_at, id
                LIMIT 100
                FOR UPDATE SKIP LOCKED
                """;
        List<String> plan = Sql.column(claimSelect, queue, queue);
        String text = String.join("\n", plan);
        assertThat(text).contains("Index Scan using task_claim_idx").doesNotContain("Sort").doesNotContain("Seq Scan on task");
        assertThat(text).containsPattern("rows=100 loops=1");
        Sql.update("DELETE FROM task WHERE queue = ?", queue);
    }
}
