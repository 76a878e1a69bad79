package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The statements that take a batch of tasks as arrays (outcomes, lease renewals, releases) do
 * work in proportion to the batch, also with the plan the service really runs: a prepared
 * statement's cached generic plan, which knows nothing of the arrays' lengths and guesses ten
 * elements. Read from the plan (rows produced and rows filtered out by every node), not timed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
final class BatchPlanIntegrationTests {

    private static final int BATCH = 1000;
    /** Rows a node touches per task of the batch, over the whole plan; a comparison of every pair is ~BATCH. */
    private static final int ROWS_PER_TASK = 30;
    private static final Pattern NODE = Pattern.compile("actual time=[0-9.]+\\.\\.[0-9.]+ rows=(\\d+) loops=(\\d+)");
    private static final Pattern REMOVED = Pattern.compile("Rows Removed by (?:Join )?Filter: (\\d+)");

    private final String queue = TaskFixtures.uniqueQueue("batch-plan");
    private List<String> ids;
    private List<String> leaseIds;
    private List<String> workerIds;

    @BeforeAll
    void fill() {
        Sql.update("INSERT INTO task (queue, type, state, attempt, worker_id, lease_id, started_at, lease_expires_at,"
                + " timeout_at) SELECT ?, 'noop', 'running', 1, 'w-' || (g % 2), md5(g::text)::uuid, now(),"
                + " now() + interval '1 hour', now() + interval '2 hours' FROM generate_series(1, ?) g", queue, BATCH);
        TaskRows.followQueue(queue);
        Sql.update("ANALYZE task");
        ids = Sql.column("SELECT id FROM task WHERE queue = ? ORDER BY id", queue);
        leaseIds = Sql.column("SELECT lease_id FROM task WHERE queue = ? ORDER BY id", queue);
        workerIds = Sql.column("SELECT worker_id FROM task WHERE queue = ? ORDER BY id", queue);
    }

    @AfterAll
    void empty() {
        Sql.update("DELETE FROM task WHERE queue = ?", queue);
        TaskRows.followQueue(queue);
    }

    @Test
    void writingABatchOfOutcomesComparesNoOutcomeWithEveryOther() throws SQLException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("ids", array(ids, "bigint"));
        values.put("leaseIds", array(leaseIds, "uuid"));
        values.put("workerIds", array(workerIds, "text"));
        values.put("succeeded", "array_fill(true, ARRAY[" + BATCH + "])");
        values.put("results", "array_fill('{}'::text, ARRAY[" + BATCH + "])");
        values.put("errors", "array_fill(NULL::text, ARRAY[" + BATCH + "])");
        values.put("retryable", "array_fill(true, ARRAY[" + BATCH + "])");
        values.put("delaysMs", "array_fill(0::bigint, ARRAY[" + BATCH + "])");
        values.put("snoozesMs", "array_fill(NULL::bigint, ARRAY[" + BATCH + "])");
        assertLinear(TaskSql.COMPLETE_MANY, values, "Update on task", 1);
    }

    @Test
    void renewingABatchOfLeasesComparesNoLeaseWithEveryOther() throws SQLException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("ids", array(Sql.column("SELECT id FROM task WHERE queue = ? AND worker_id = 'w-0' ORDER BY id", queue),
                "bigint"));
        values.put("leaseIds", array(Sql.column("SELECT lease_id FROM task WHERE queue = ? AND worker_id = 'w-0'"
                + " ORDER BY id", queue), "uuid"));
        values.put("leaseMs", "30000");
        values.put("workerId", "'w-0'");
        assertLinear(TaskSql.RENEW_LEASES, values, "Update on task", 0);
    }

    @Test
    void releasingABatchOfLeasesComparesNoLeaseWithEveryOther() throws SQLException {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("ids", array(ids, "bigint"));
        values.put("leaseIds", array(leaseIds, "uuid"));
        values.put("error", "'released: a test'");
        assertLinear(TaskSql.RELEASE_LEASES, values, "Update on task", 1);
    }

    /**
     * Runs the statement as a prepared statement under its generic plan, in a transaction that is
     * rolled back, and checks that it changed the whole batch touching a bounded number of rows per
     * task, and appended the events of the tasks it changed as {@code eventRows} rows (one per
     * queue, or none).
     */
    private void assertLinear(String statement, Map<String, String> values, String changingNode, int eventRows)
            throws SQLException {
        JdbcStatement numbered = JdbcStatement.numbered(statement);
        String arguments = numbered.names().stream().map(name -> {
            assertThat(values).as("a value for :%s", name).containsKey(name);
            return values.get(name);
        }).collect(Collectors.joining(", "));
        List<String> plan = new ArrayList<>();
        try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
            connection.setAutoCommit(false);
            try {
                sql.execute("SET LOCAL plan_cache_mode = force_generic_plan");
                sql.execute("PREPARE batch_plan AS " + numbered.sql());
                try (ResultSet rows = sql.executeQuery("EXPLAIN (ANALYZE, COSTS OFF) EXECUTE batch_plan(" + arguments + ")")) {
                    while (rows.next()) {
                        plan.add(rows.getString(1));
                    }
                }
                try (ResultSet rows = sql.executeQuery("SELECT count(*), coalesce(sum(cardinality(task_ids)), 0),"
                        + " (SELECT count(*) FROM task WHERE queue = '" + queue + "' AND event_batch IS NOT NULL)"
                        + " FROM task_event_batch WHERE queue = '" + queue + "'")) {
                    rows.next();
                    assertThat(rows.getLong(1)).as("event rows").isEqualTo(eventRows);
                    assertThat(rows.getLong(2)).as("events, one per task changed").isEqualTo(rows.getLong(3));
                }
            } finally {
                connection.rollback();
                sql.execute("DEALLOCATE ALL");
            }
        }
        String text = String.join("\n", plan);
        assertThat(changedRows(plan, changingNode)).as("rows changed:%n%s", text).isGreaterThanOrEqualTo(BATCH / 2);
        assertThat(rowsTouched(plan)).as("rows produced or filtered out by all nodes, for %d tasks:%n%s", BATCH, text)
                .isLessThanOrEqualTo((long) ROWS_PER_TASK * BATCH);
    }

    private static long changedRows(List<String> plan, String node) {
        return plan.stream().filter(line -> line.contains(node)).map(NODE::matcher).filter(Matcher::find)
                .mapToLong(m -> Long.parseLong(m.group(1))).max().orElse(0);
    }

    /** Σ (rows + rows removed by a filter) × loops over every node. */
    private static long rowsTouched(List<String> plan) {
        long touched = 0;
        long loops = 1;
        for (String line : plan) {
            Matcher node = NODE.matcher(line);
            if (node.find()) {
                loops = Long.parseLong(node.group(2));
                touched += Long.parseLong(node.group(1)) * loops;
            }
            Matcher removed = REMOVED.matcher(line);
            if (removed.find()) {
                touched += Long.parseLong(removed.group(1)) * loops;
            }
        }
        return touched;
    }

    private static String array(List<String> values, String type) {
        return values.stream().collect(Collectors.joining(",", "'{", "}'::" + type + "[]"));
    }
}
