package dev.tasklane.events;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tasklane.queue.JdbcStatement;
import dev.tasklane.testsupport.EventRows;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays filter in SQL: a stream of one queue resumed from the start of the log reads that
 * queue's event batches through its index, not every batch; pages stop at their byte budget.
 */
final class EventReplayPlanIntegrationTests {

    @Test
    void aQueuesReplayReadsOnlyThatQueuesEvents() throws Exception {
        String mine = TaskFixtures.uniqueQueue("replay-mine");
        String others = TaskFixtures.uniqueQueue("replay-others");
        EventRows.appendOrphans(others, 20_000, 1, "queued", "'{}'::jsonb");
        EventRows.appendOrphans(mine, 10, 1, "queued", "'{}'::jsonb");
        Sql.update("ANALYZE task_event_batch");
        List<String> plan = explain(EventSql.RANGE_OF_QUEUE, Map.of("queue", mine, "after", 0L, "upTo", Long.MAX_VALUE,
                "names", new String[0], "limit", 500, "maxBytes", 256 * 1024));
        String text = String.join("\n", plan);
        assertThat(text).contains("task_event_batch_queue_idx").doesNotContain("Seq Scan");
        // a step through the queue's index per batch of it (10), not a read of the others' 20,000
        assertThat(text).containsPattern(
                "Index Scan using task_event_batch_queue_idx on task_event_batch \\w+ \\(actual time=[0-9.]+ rows=1 loops=10\\)");
    }

    @Test
    void pagesHoldWholeBatchesAndAFilteredReplayFindsEveryMatchBetweenPagesOfOtherEvents() throws Exception {
        String queue = TaskFixtures.uniqueQueue("replay-sparse");
        EventRows.appendOrphans(queue, 600, 3, "queued", "'{}'::jsonb");
        EventRows.appendOrphans(queue, 7, 1, "failed", "'{}'::jsonb");
        EventRows.appendOrphans(queue, 600, 3, "queued", "'{}'::jsonb");
        List<String> failed = Sql.column("SELECT id FROM task_event WHERE queue = ? AND name = 'failed' ORDER BY id", queue);

        List<Long> first = page(queue, 0L, new String[0], 5);
        assertThat(first).as("two whole batches of three: more may follow").hasSize(6);

        List<String> found = new ArrayList<>();
        long cursor = 0;
        for (int pages = 0; pages < 10; pages++) {
            List<Long> ids = page(queue, cursor, new String[] {"failed"}, 5);
            ids.forEach(id -> found.add(Long.toString(id)));
            if (ids.size() < 5) {
                break;
            }
            cursor = ids.get(ids.size() - 1);
        }
        assertThat(found).containsExactlyElementsOf(failed).hasSize(7);
    }

    /** One page of a queue's replay after {@code after}: the event ids. */
    private static List<Long> page(String queue, long after, String[] names, int limit) throws Exception {
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement page = JdbcStatement.of(EventSql.RANGE_OF_QUEUE).prepare(connection, Map.of("queue", queue,
                     "after", after, "upTo", Long.MAX_VALUE, "names", names, "limit", limit, "maxBytes", 1 << 20));
             ResultSet rows = page.executeQuery()) {
            List<Long> ids = new ArrayList<>();
            while (rows.next()) {
                ids.add(rows.getLong("id"));
                assertThat(rows.getLong("page_rows")).isGreaterThanOrEqualTo(ids.size());
            }
            return ids;
        }
    }

    @Test
    void aPageEndsAtItsByteBudgetButHoldsAtLeastOneEvent() throws Exception {
        String queue = TaskFixtures.uniqueQueue("replay-bytes");
        EventRows.appendOrphans(queue, 5, 5, "succeeded", "jsonb_build_object('result', repeat('x', 100000))");
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement page = JdbcStatement.of(EventSql.RANGE_OF_QUEUE).prepare(connection, Map.of("queue", queue,
                     "after", 0L, "upTo", Long.MAX_VALUE, "names", new String[0], "limit", 500, "maxBytes", 250_000));
             ResultSet rows = page.executeQuery()) {
            int count = 0;
            long pageRows = 0;
            while (rows.next()) {
                count++;
                pageRows = rows.getLong("page_rows");
            }
            assertThat(count).isEqualTo(3); // 0, then 100 KB, then 200 KB before: the fourth would start past 250 KB
            assertThat(pageRows).isEqualTo(5);
        }
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement page = JdbcStatement.of(EventSql.RANGE_OF_QUEUE).prepare(connection, Map.of("queue", queue,
                     "after", 0L, "upTo", Long.MAX_VALUE, "names", new String[0], "limit", 500, "maxBytes", 1));
             ResultSet rows = page.executeQuery()) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.next()).isFalse();
        }
    }

    private static List<String> explain(String statement, Map<String, ?> values) throws Exception {
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement explain = JdbcStatement.of("EXPLAIN (ANALYZE, COSTS OFF) " + statement)
                     .prepare(connection, values);
             ResultSet rows = explain.executeQuery()) {
            List<String> lines = new ArrayList<>();
            while (rows.next()) {
                lines.add(rows.getString(1));
            }
            return lines;
        }
    }
}
