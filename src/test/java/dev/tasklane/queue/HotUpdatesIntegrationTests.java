package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A task's claim and its outcome change its row without a new index entry (V023): every column
 * they change is outside the task table's indexes and their predicates, and the table leaves room
 * on its pages for the new versions. Measured on tables of the test's own, made like the service's
 * (with the service's storage parameters), so that the table statistics count this burn-down only.
 */
final class HotUpdatesIntegrationTests {

    private static final int TASKS = 2000;
    private static final int CLAIM = 1000;
    private static final int OUTCOMES = 250;

    @Test
    void claimsAndOutcomesUpdateTaskRowsInPlaceWithoutNewIndexEntries() throws SQLException {
        String schema = "hot_" + UUID.randomUUID().toString().substring(0, 8);
        TaskSchemas.create(schema);
        try {
            String storage = Sql.column("SELECT array_to_string(reloptions, ', ') FROM pg_class"
                    + " WHERE oid = 'public.task'::regclass").get(0);
            assertThat(storage).contains("fillfactor=");
            Sql.update("ALTER TABLE " + schema + ".task SET (" + storage + ")");

            try (Connection connection = TestDatabase.get().connect(); Statement sql = connection.createStatement()) {
                sql.execute("SET search_path = " + schema + ", public");
                sql.execute("SET plan_cache_mode = force_generic_plan");
                sql.execute("INSERT INTO task (queue, type) SELECT 'hot', 'noop' FROM generate_series(1, " + TASKS + ")");
                sql.execute("INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at)"
                        + " SELECT id, queue, type, priority, run_at, concurrency_key, created_at FROM task");
                for (int claimed = 0; claimed < TASKS; claimed += CLAIM) {
                    sql.execute("SELECT count(*) FROM tasklane_claim_any_type('hot', " + CLAIM + ", 'w', gen_random_uuid(),"
                            + " 600000, false, NULL, NULL)");
                }
                List<String> leases = column(sql, "SELECT id || ' ' || lease_id FROM task ORDER BY id");
                assertThat(leases).hasSize(TASKS);
                sql.execute("PREPARE outcomes AS " + JdbcStatement.numbered(TaskSql.COMPLETE_MANY).sql());
                for (int from = 0; from < TASKS; from += OUTCOMES) {
                    List<String[]> batch = leases.subList(from, from + OUTCOMES).stream().map(row -> row.split(" ")).toList();
                    String ids = array(batch.stream().map(row -> row[0]).toList(), "bigint");
                    String leaseIds = array(batch.stream().map(row -> "'" + row[1] + "'").toList(), "uuid");
                    sql.execute("EXECUTE outcomes(" + ids + ", " + leaseIds + ", array_fill('w'::text, ARRAY[" + OUTCOMES
                            + "]), array_fill(true, ARRAY[" + OUTCOMES + "]), array_fill('{}'::text, ARRAY[" + OUTCOMES
                            + "]), array_fill(NULL::text, ARRAY[" + OUTCOMES + "]), array_fill(true, ARRAY[" + OUTCOMES
                            + "]), array_fill(0::bigint, ARRAY[" + OUTCOMES + "]), array_fill(NULL::bigint, ARRAY["
                            + OUTCOMES + "]))");
                }
                assertThat(column(sql, "SELECT state || ' ' || count(*) FROM task GROUP BY state"))
                        .containsExactly("succeeded " + TASKS);
                assertThat(column(sql, "SELECT (SELECT count(*) FROM task_ready) + (SELECT count(*) FROM task_running)"))
                        .containsExactly("0");
                sql.execute("SELECT pg_stat_force_next_flush()");
            }

            String counts = "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables"
                    + " WHERE relid = '" + schema + ".task'::regclass";
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Long.parseLong(Sql.column(counts).get(0).split(" ")[0]) >= 2L * TASKS);
            String[] updates = Sql.column(counts).get(0).split(" ");
            long all = Long.parseLong(updates[0]);
            long hot = Long.parseLong(updates[1]);
            assertThat(all).as("a claim and an outcome per task").isEqualTo(2L * TASKS);
            assertThat((double) hot / all).as("HOT share of %d updates", all).isGreaterThanOrEqualTo(0.9);
        } finally {
            TaskSchemas.drop(schema);
        }
    }

    private static List<String> column(Statement sql, String query) throws SQLException {
        List<String> values = new ArrayList<>();
        try (ResultSet rows = sql.executeQuery(query)) {
            while (rows.next()) {
                values.add(rows.getString(1));
            }
        }
        return values;
    }

    private static String array(List<String> values, String type) {
        return values.stream().collect(Collectors.joining(", ", "ARRAY[", "]::" + type + "[]"));
    }
}
