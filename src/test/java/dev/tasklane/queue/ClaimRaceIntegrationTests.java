package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The race from "Queues in Postgres", kept as a test: two workers under READ COMMITTED take
 * "the oldest unassigned task" at the same time.
 */
final class ClaimRaceIntegrationTests {

    private static final String NAIVE_CLAIM = """
            UPDATE task SET worker_id = ?
            WHERE id = (SELECT min(id) FROM task WHERE queue = ? AND worker_id IS NULL)
            RETURNING id
            """;

    @Test
    void theArticlesNaiveUpdateLetsTwoWorkersTakeTheSameTask() throws Exception {
        String queue = TaskFixtures.uniqueQueue("naive");
        insertQueued(queue, 2);
        try (Connection first = transaction(); Connection second = transaction()) {
            List<Long> firstClaim = run(first, NAIVE_CLAIM, "worker-a", queue);
            CompletableFuture<List<Long>> secondClaim = CompletableFuture.supplyAsync(() -> run(second, NAIVE_CLAIM,
                    "worker-b", queue));
            awaitBlocked();
            first.commit();
            List<Long> secondClaimed = secondClaim.get(10, TimeUnit.SECONDS);
            second.commit();
            // Both were told they own the same task: worker-a's claim was lost to worker-b's.
            assertThat(firstClaim).hasSize(1);
            assertThat(secondClaimed).isEqualTo(firstClaim);
            assertThat(Sql.column("SELECT worker_id FROM task WHERE id = ?", firstClaim.get(0))).containsExactly("worker-b");
        }
    }

    @Test
    void theClaimStatementSkipsALockedTaskInsteadOfTakingItTwice() throws Exception {
        String queue = TaskFixtures.uniqueQueue("skip-locked");
        insertQueued(queue, 2);
        try (Connection first = transaction(); Connection second = transaction()) {
            List<Long> firstClaim = claim(first, queue, "worker-a", 1);
            List<Long> secondClaim = claim(second, queue, "worker-b", 1); // answers at once: no lock wait
            first.commit();
            second.commit();
            assertThat(firstClaim).hasSize(1);
            assertThat(secondClaim).hasSize(1).doesNotContainAnyElementsOf(firstClaim);
            assertThat(Sql.column("SELECT count(*) FROM task_event e JOIN task t ON t.id = e.task_id"
                    + " WHERE t.queue = ? AND e.name = 'running'", queue)).containsExactly("2");
        }
    }

    @Test
    void manyConcurrentClaimersTakeEveryTaskExactlyOnce() {
        String queue = TaskFixtures.uniqueQueue("claimers");
        insertQueued(queue, 500);
        List<CompletableFuture<List<Long>>> claimers = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            String worker = "worker-" + w;
            claimers.add(CompletableFuture.supplyAsync(() -> {
                List<Long> mine = new ArrayList<>();
                try (Connection connection = TestDatabase.get().connect()) {
                    List<Long> batch;
                    do {
                        batch = claim(connection, queue, worker, 7);
                        mine.addAll(batch);
                    } while (!batch.isEmpty());
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
                return mine;
            }));
        }
        List<Long> all = claimers.stream().flatMap(c -> c.join().stream()).toList();
        assertThat(all).hasSize(500).doesNotHaveDuplicates();
    }

    /**
     * During a rolling update, replicas of the previous version claim through the claim functions'
     * signatures of migration V017, beside replicas of this one.
     */
    @Test
    void claimsThroughThePreviousVersionsSignaturesStillTakeTasksOnce() throws SQLException {
        String queue = TaskFixtures.uniqueQueue("old-signatures");
        insertQueued(queue, 3);
        try (Connection connection = TestDatabase.get().connect()) {
            List<Long> anyType = run(connection, "SELECT * FROM tasklane_claim_any_type(?, 2, 'old', ?, 30000)",
                    queue, UUID.randomUUID());
            List<Long> ofTypes = run(connection, "SELECT * FROM tasklane_claim_of_types(?, ARRAY['noop'], 2, 'old', ?,"
                    + " 30000)", queue, UUID.randomUUID());
            assertThat(anyType).hasSize(2);
            assertThat(ofTypes).hasSize(1).doesNotContainAnyElementsOf(anyType);
        }
        assertThat(Sql.column("SELECT count(*) FROM task_event e JOIN task t ON t.id = e.task_id"
                + " WHERE t.queue = ? AND e.name = 'running'", queue)).containsExactly("3");
    }

    private static List<Long> claim(Connection connection, String queue, String worker, int limit) {
        try (PreparedStatement statement = JdbcStatement.of(TaskSql.CLAIM_ANY_TYPE).prepare(connection,
                JdbcStatement.claimWithoutFlowControl(Map.of("queue", queue, "limit", limit, "workerId", worker,
                        "leaseId", UUID.randomUUID(), "leaseMs", 30_000L)))) {
            return ids(statement.executeQuery());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Long> run(Connection connection, String sql, Object... params) {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                statement.setObject(i + 1, params[i]);
            }
            return ids(statement.executeQuery());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Long> ids(ResultSet rows) throws SQLException {
        List<Long> ids = new ArrayList<>();
        while (rows.next()) {
            ids.add(rows.getLong("id"));
        }
        return ids;
    }

    private static Connection transaction() throws SQLException {
        Connection connection = TestDatabase.get().connect();
        connection.setAutoCommit(false);
        return connection;
    }

    private static void awaitBlocked() {
        await().atMost(java.time.Duration.ofSeconds(10)).until(() -> !Sql.column(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                        + " AND query LIKE 'UPDATE task SET worker_id%'").isEmpty());
    }

    private static void insertQueued(String queue, int count) {
        Sql.update("INSERT INTO task (queue, type) SELECT ?, 'noop' FROM generate_series(1, ?)", queue, count);
        TaskRows.followQueue(queue);
    }
}
