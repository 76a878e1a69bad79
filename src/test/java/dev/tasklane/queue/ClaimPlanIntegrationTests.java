package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 * A claim reads due rows only: it costs the same (in pages read, from its plan) with a million
 * tasks waiting for later, a large backlog of due ones, or many due tasks of types it does not
 * ask for, as with nothing but a thousand due tasks; the depth read, likewise, reads no row of a
 * task waiting for later. Timing them is the benchmark's job; the plan shows why.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
final class ClaimPlanIntegrationTests {

    private static final int BATCH = 100;
    private static final Pattern BUFFERS = Pattern.compile("Buffers: shared hit=(\\d+)(?: read=(\\d+))?");

    private final String due = TaskFixtures.uniqueQueue("plan-due");
    private final String delayed = TaskFixtures.uniqueQueue("plan-delayed");
    private final String backlog = TaskFixtures.uniqueQueue("plan-backlog");
    private final String mixed = TaskFixtures.uniqueQueue("plan-mixed");
    /** Tables of its own: their statistics say "every task is a noop", whatever other tests left. */
    private final String oneType = "plan_one_type_" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    void fill() {
        for (String queue : List.of(due, delayed, backlog, mixed)) {
            insert(queue, "noop", 1000, "now() - (g % 1000) * interval '1 second'");
        }
        insert(delayed, "noop", 1_000_000, "now() + interval '1 day' + (g % 100000) * interval '1 second'");
        insert(backlog, "noop", 50_000, "now() - interval '1 day' - (g % 1000) * interval '1 second'");
        insert(mixed, "other", 50_000, "now() - (g % 1000) * interval '1 second'");
        Sql.update("ANALYZE task");
        Sql.update("ANALYZE task_ready");
        TaskSchemas.create(oneType);
        Sql.update("INSERT INTO " + oneType + ".task (queue, type, priority, run_at) SELECT q, 'noop', (g % 7) - 3,"
                + " CASE q WHEN 'later' THEN now() + (g % 1000) * interval '1 second'"
                + " ELSE now() - (g % 1000) * interval '1 second' END"
                + " FROM unnest(ARRAY['few', 'many', 'later'], ARRAY[1000, 200000, 200000]) AS queues(q, n),"
                + " generate_series(1, n) g");
        readyRowsOf(oneType);
        Sql.update("ANALYZE " + oneType + ".task");
        Sql.update("ANALYZE " + oneType + ".task_ready");
    }

    @AfterAll
    void empty() {
        Sql.update("DELETE FROM task WHERE queue IN (?, ?, ?, ?)", due, delayed, backlog, mixed);
        List.of(due, delayed, backlog, mixed).forEach(TaskRows::followQueue);
        TaskSchemas.drop(oneType);
    }

    /**
     * Claims run in functions whose statements keep one generic plan per session, made without
     * knowing the queue or the batch size (migrations V017, V018): that one plan must cost no more
     * behind a million delayed tasks, a backlog, due tasks of other types, or in a table of one
     * type, than with only due tasks. Each plan is read on the second call of its session, after
     * the first has built the plan (and read the catalog for it). Where every task is of one type,
     * the planner rates {@code type = <a wanted type>} as true of every row; left to choose, it
     * walked the whole queue once for each wanted type that has no tasks, half a second a claim
     * with a million waiting.
     */
    @Test
    void theTypedClaimKeepsOneGenericPlanThatCostsTheSameWhateverWaits() throws SQLException {
        String[] wanted = {"noop", "sleep", "http"};
        List<String> baseline = planOfClaimFunction("public", due, wanted);
        for (String queue : List.of(delayed, backlog, mixed)) {
            assertCostsAtMostHalfAsMuchAgain(planOfClaimFunction("public", queue, wanted), baseline);
        }
        assertCostsAtMostHalfAsMuchAgain(planOfClaimFunction(oneType, "many", wanted),
                planOfClaimFunction(oneType, "few", wanted));
    }

    /**
     * That one plan is costed for a tenth of the queue, far above {@code jit_above_cost} behind a
     * large backlog: compiled anew on every call, a claim of 100 with a million due tasks took
     * half a second where it runs in 5-7 ms. Buffers do not show it, so the functions' settings
     * are read here.
     */
    @Test
    void theClaimFunctionsKeepOnePlanAndNeverCompileIt() {
        assertThat(Sql.column("SELECT proname || '/' || pronargs || ': ' || coalesce(array_to_string(proconfig, ', '),"
                + " prosrc) FROM pg_proc WHERE proname LIKE 'tasklane\\_%' ORDER BY proname, pronargs"))
                .hasSize(9)
                // the previous versions' signatures only call the current functions
                .satisfies(rows -> assertThat(rows.get(0)).startsWith("tasklane_claim_any_type/5: ")
                        .contains("tasklane_claim_any_type(p_queue, p_limit, p_worker_id, p_lease_id, p_lease_ms,"))
                .satisfies(rows -> assertThat(rows.get(2)).startsWith("tasklane_claim_of_types/6: ")
                        .contains("tasklane_claim_of_types(p_queue, p_types, p_limit, p_worker_id, p_lease_id, p_lease_ms,"))
                .satisfies(rows -> assertThat(rows.get(7)).startsWith("tasklane_start_claimed/7: ")
                        .contains("tasklane_start_claimed(p_ids, p_queue, p_worker_id, p_lease_id, p_lease_ms,"))
                .contains("tasklane_claim_any_type/8: plan_cache_mode=force_generic_plan, jit=off",
                        "tasklane_claim_of_types/9: plan_cache_mode=force_generic_plan, jit=off",
                        "tasklane_claim_under_flow/6: plan_cache_mode=force_generic_plan, jit=off",
                        "tasklane_pick_any_type/3: plan_cache_mode=force_generic_plan, jit=off",
                        "tasklane_pick_of_types/4: plan_cache_mode=force_generic_plan, jit=off",
                        "tasklane_start_claimed/8: plan_cache_mode=force_generic_plan, jit=off");
    }

    @Test
    void theClaimOfAnyTypeKeepsOneGenericPlanThatCostsTheSameWhateverWaits() throws SQLException {
        List<String> baseline = planOfClaimFunction("public", due, null);
        for (String queue : List.of(delayed, backlog)) {
            assertCostsAtMostHalfAsMuchAgain(planOfClaimFunction("public", queue, null), baseline);
        }
        assertCostsAtMostHalfAsMuchAgain(planOfClaimFunction(oneType, "many", null),
                planOfClaimFunction(oneType, "few", null));
    }

    @Test
    void wantedTypesWithNoTasksCostTheNextDueTimeNothingWhereOneTypeFillsTheTable() throws SQLException {
        String[] wanted = {"noop", "sleep", "http"};
        List<String> next = explain(oneType, TaskSql.NEXT_DUE_OF_TYPES, Map.of("queue", "later", "types", wanted));
        assertThat(buffers(next)).as(String.join("\n", next)).isLessThan(200);
    }

    /**
     * A claim by key over a burst of tasks the last ANALYZE never saw: the statistics say the
     * queue is empty and nothing waits. Asked "state = 'queued'", the planner read each key's
     * tasks from the state index, every waiting row of the table once per key (four seconds a
     * claim of 1,000 keys in the benchmark).
     */
    @Test
    void aClaimByKeyReadsTheKeyIndexWhenTheStatisticsNeverSawTheBurst() throws SQLException {
        String stale = "plan_stale_" + UUID.randomUUID().toString().substring(0, 8);
        TaskSchemas.create(stale);
        try {
            Sql.update("INSERT INTO " + stale + ".task (queue, type, state, finished_at) SELECT 'old', 'noop',"
                    + " 'succeeded', now() FROM generate_series(1, 100000) g");
            Sql.update("ANALYZE " + stale + ".task");
            Sql.update("ANALYZE " + stale + ".task_ready");
            Sql.update("INSERT INTO " + stale + ".task (queue, type, concurrency_key) SELECT 'burst', 'noop',"
                    + " 'k' || (g % 500) FROM generate_series(1, 20000) g");
            readyRowsOf(stale);
            Map<String, Object> values = new HashMap<>(Map.of("queue", "burst", "limit", 500, "workerId", "plan",
                    "leaseId", UUID.randomUUID(), "leaseMs", 30_000L, "types", new String[] {"noop", "sleep"},
                    "roundRobin", true));
            for (String off : List.of("maxRunningPerKey", "ratePerKeyCount", "ratePerKeyPeriodMs", "rateCount",
                    "ratePeriodMs", "lastKey")) {
                values.put(off, null);
            }
            List<String> plan = explain(stale, TaskSql.CLAIM_BY_KEY, values);
            String text = String.join("\n", plan);
            assertThat(text).contains("rows=500 loops=1").doesNotContain("Seq Scan on task")
                    .doesNotContain("task_state_id_idx").doesNotContain("task_queue_id_idx");
            // each key's tasks are sought by key in the key index, never filtered out of a wider scan
            assertThat(plan.stream().filter(line -> line.contains("concurrency_key = r.k")).toList()).as(text)
                    .isNotEmpty().allSatisfy(line -> assertThat(line.strip()).startsWith("Index Cond:"));
            // a seek per key (500), a few pages per claimed task: reading the burst per key would be millions
            assertThat(buffers(plan)).as(text).isLessThan(30_000);
        } finally {
            TaskSchemas.drop(stale);
        }
    }

    @Test
    void theNextDueTimeIsASeekNotAScan() throws SQLException {
        List<String> next = explain("public", TaskSql.NEXT_DUE_ANY_TYPE, Map.of("queue", delayed));
        assertThat(String.join("\n", next)).doesNotContain("Seq Scan").doesNotContain("Sort");
        // a few pages per priority (7 here); reading the million rows would take tens of thousands
        assertThat(buffers(next)).isLessThan(200);
    }

    /**
     * The depth read counts the delayed tasks from the claim index alone and reads the rows of
     * the due ones only, as the claim does; reading every waiting row, it took a core for 260 ms
     * per million delayed tasks every interval, and the pickups of that moment waited for it.
     */
    @Test
    void tasksWaitingForLaterCostTheDepthReadNoRowOfTheTable() throws SQLException, InterruptedException {
        String depth = "plan_depth_" + UUID.randomUUID().toString().substring(0, 8);
        TaskSchemas.create(depth);
        try {
            Sql.update("INSERT INTO " + depth + ".task (queue, type, priority, run_at) SELECT 'later', 'noop', (g % 7) - 3,"
                    + " now() + interval '1 day' + (g % 100000) * interval '1 second' FROM generate_series(1, 200000) g");
            Sql.update("INSERT INTO " + depth + ".task (queue, type, priority, run_at) SELECT q, 'noop', (g % 7) - 3,"
                    + " now() - (g % 1000) * interval '1 second' FROM unnest(ARRAY['few', 'later']) AS q, generate_series(1, 500) g");
            readyRowsOf(depth);
            allVisible(depth + ".task_ready"); // autovacuum's work: all-visible pages, fresh statistics
            long tablePages = Long.parseLong(Sql.column("SELECT pg_relation_size('" + depth + ".task') / 8192").get(0));

            List<String> plan = explain(depth, QueueSql.DEPTH_PLANNING, QueueSql.DEPTH, Map.of());
            String text = String.join("\n", plan);

            assertThat(text).doesNotContain("Seq Scan on task").doesNotContain("JIT");
            assertThat(plan.stream().filter(line -> line.contains("Heap Fetches:")).toList()).isNotEmpty()
                    .allSatisfy(line -> assertThat(line.strip()).isEqualTo("Heap Fetches: 0"));
            // the claim index's entries and the 1,000 due rows' pages: fewer than the table's, payloads or not
            assertThat(buffers(plan)).as("pages read, against %d in the table:%n%s", tablePages, text)
                    .isLessThan(tablePages);
        } finally {
            TaskSchemas.drop(depth);
        }
    }

    /**
     * Vacuums until every page of the table is marked all-visible: a vacuum cannot mark a page
     * while a transaction that began before its rows were written is still open, and the shared
     * test database has the other test classes' replicas working in the background.
     */
    private static void allVisible(String table) throws InterruptedException {
        for (int round = 0; round < 50; round++) {
            Sql.update("VACUUM ANALYZE " + table);
            if (Sql.column("SELECT relallvisible = relpages FROM pg_class WHERE oid = '" + table + "'::regclass")
                    .equals(List.of("t"))) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("a transaction kept " + table + " from being all-visible for 5 s");
    }

    private static void assertCostsAtMostHalfAsMuchAgain(List<String> plan, List<String> baseline) {
        String text = String.join("\n", plan);
        assertThat(text).doesNotContain("Seq Scan on task");
        assertThat(text).contains("rows=" + BATCH + " loops=1"); // it claimed a full batch
        assertThat((double) buffers(plan)).as("pages read, against %d with only due tasks:%n%s", buffers(baseline), text)
                .isLessThanOrEqualTo(1.5 * buffers(baseline));
    }

    /**
     * The plan of {@link TaskSql#CLAIM_OF_TYPES}, or of {@link TaskSql#CLAIM_ANY_TYPE} where
     * {@code types} is null, run for real in a transaction that is rolled back (so the queue stays
     * as it was), after a first call of the function in its session has built its plan on an
     * empty queue.
     */
    private static List<String> planOfClaimFunction(String schema, String queue, String[] types) throws SQLException {
        String firstCall = types == null
                ? "SELECT count(*) FROM tasklane_claim_any_type('plan-first-call', 1, 'plan', gen_random_uuid(), 1000, false,"
                        + " NULL, NULL)"
                : "SELECT count(*) FROM tasklane_claim_of_types('plan-first-call', ARRAY['noop'], 1, 'plan',"
                        + " gen_random_uuid(), 1000, false, NULL, NULL)";
        Map<String, Object> values = new HashMap<>(Map.of("queue", queue, "limit", BATCH, "workerId", "plan",
                "leaseId", UUID.randomUUID(), "leaseMs", 30_000L));
        if (types != null) {
            values.put("types", types);
        }
        return explain(schema, "SET LOCAL search_path = " + schema + ", public; " + firstCall,
                types == null ? TaskSql.CLAIM_ANY_TYPE : TaskSql.CLAIM_OF_TYPES,
                JdbcStatement.claimWithoutFlowControl(values));
    }

    private static List<String> explain(String schema, String statement, Map<String, ?> values) throws SQLException {
        return explain(schema, "SELECT 1", statement, values);
    }

    /** Runs {@code setup} first, in the same transaction. */
    private static List<String> explain(String schema, String setup, String statement, Map<String, ?> values)
            throws SQLException {
        JdbcStatement explain = JdbcStatement.of("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + statement);
        try (Connection connection = TestDatabase.get().connect()) {
            connection.setAutoCommit(false);
            connection.setSchema(schema);
            try (PreparedStatement prepared = connection.prepareStatement(setup)) {
                prepared.execute();
            }
            List<String> lines = new ArrayList<>();
            try (PreparedStatement prepared = explain.prepare(connection, values); ResultSet rows = prepared.executeQuery()) {
                while (rows.next()) {
                    lines.add(rows.getString(1));
                }
            } finally {
                connection.rollback();
            }
            return lines;
        }
    }

    /** Pages the whole statement touched: the top node's count, which includes every node below it. */
    private static long buffers(List<String> plan) {
        for (String line : plan) {
            Matcher matcher = BUFFERS.matcher(line);
            if (matcher.find()) {
                return Long.parseLong(matcher.group(1)) + (matcher.group(2) == null ? 0 : Long.parseLong(matcher.group(2)));
            }
        }
        throw new AssertionError("no buffer counts in the plan:\n" + String.join("\n", plan));
    }

    /** The ready rows (V023) of the queued tasks of a test's own schema, as the service's enqueue writes them. */
    private static void readyRowsOf(String schema) {
        Sql.update("INSERT INTO " + schema + ".task_ready (id, queue, type, priority, run_at, concurrency_key, created_at)"
                + " SELECT id, queue, type, priority, run_at, concurrency_key, created_at FROM " + schema + ".task"
                + " WHERE state = 'queued'");
    }

    private static void insert(String queue, String type, int count, String runAt) {
        Sql.update("INSERT INTO task (queue, type, priority, run_at) SELECT ?, ?, (g % 7) - 3, " + runAt
                + " FROM generate_series(1, ?) g", queue, type, count);
        TaskRows.followQueue(queue);
    }
}
