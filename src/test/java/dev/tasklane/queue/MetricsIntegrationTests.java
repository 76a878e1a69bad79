package dev.tasklane.queue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The metrics of the contract, read the way Prometheus reads them, after real work. */
final class MetricsIntegrationTests extends WorkerIntegrationTest {

    private static final Path DASHBOARD = Path.of("k8s/overlays/prod/dashboards/tasklane.json");
    /** Metric names by the prefixes of what the service exports (its own, pools, JVM, HTTP). */
    private static final Pattern METRIC_NAME = Pattern.compile(
            "\\b(?:tasklane|r2dbc|jvm|process|system|http_server)_[a-z0-9_]+\\b");

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Autowired
    private QueueDepthMetrics depth;
    @Autowired
    private TaskStore store;
    @Autowired
    private DatabaseClient db;
    @Autowired
    private TransactionalOperator transactions;

    @Test
    void workShowsUpUnderTheContractsMetricNamesAndLabels() {
        Tasks tasks = new Tasks(api());
        String idle = TaskFixtures.uniqueQueue("metrics-idle");
        long succeeded = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        long failed = tasks.enqueue("wk-retry", "{\"type\": \"sleep\", \"maxAttempts\": 2, \"payload\": {\"failAttempts\": 9}}")
                .get("id").longValue();
        tasks.enqueue(idle, "{\"type\": \"noop\"}");
        long cancelled = tasks.enqueue(idle, "{\"type\": \"noop\"}").get("id").longValue();
        long rescued = tasks.enqueue(idle, "{\"type\": \"noop\"}").get("id").longValue();
        tasks.post("/api/v1/tasks/" + cancelled + "/cancel", 200);
        Sql.update("UPDATE task SET state = 'running', attempt = 1, worker_id = 'gone', started_at = now(),"
                + " lease_expires_at = now() - interval '1 second' WHERE id = ?", rescued);
        TaskRows.follow(rescued);
        store.rescueExpired(500).collectList().block(PATIENCE);
        tasks.awaitState(succeeded, "succeeded", PATIENCE);
        tasks.awaitState(failed, "failed", PATIENCE);
        awaitDepthRead(idle, "queued", 2.0);

        String scrape = scrape();

        assertThat(value(scrape, "tasklane_tasks_enqueued_total", "queue=\"wk-basic\"", "type=\"noop\"")).hasValueSatisfying(v -> assertThat(v).isPositive());
        assertThat(value(scrape, "tasklane_tasks_enqueued_total", "queue=\"" + idle + "\"", "type=\"noop\"")).contains(3.0);
        assertThat(value(scrape, "tasklane_tasks_claimed_total", "queue=\"wk-retry\"")).hasValueSatisfying(v -> assertThat(v).isGreaterThanOrEqualTo(2));
        assertThat(value(scrape, "tasklane_tasks_completed_total", "queue=\"wk-basic\"", "type=\"noop\"", "outcome=\"succeeded\"")).isPresent();
        assertThat(value(scrape, "tasklane_tasks_completed_total", "queue=\"wk-retry\"", "type=\"sleep\"", "outcome=\"failed\"")).isPresent();
        assertThat(value(scrape, "tasklane_tasks_completed_total", "queue=\"" + idle + "\"", "type=\"noop\"", "outcome=\"cancelled\"")).contains(1.0);
        assertThat(value(scrape, "tasklane_tasks_retried_total", "queue=\"wk-retry\"", "type=\"sleep\"")).isPresent();
        assertThat(value(scrape, "tasklane_tasks_rescued_total", "queue=\"" + idle + "\"")).contains(1.0);
        assertThat(value(scrape, "tasklane_queue_depth", "queue=\"" + idle + "\"", "state=\"queued\"")).contains(2.0);
        assertThat(value(scrape, "tasklane_queue_depth", "queue=\"" + idle + "\"", "state=\"running\"")).contains(0.0);
        assertThat(value(scrape, "tasklane_queue_oldest_age_seconds", "queue=\"" + idle + "\"")).hasValueSatisfying(v -> assertThat(v).isGreaterThan(0));
        assertThat(value(scrape, "tasklane_task_queue_time_seconds_bucket", "queue=\"wk-basic\"", "le=\"+Inf\"")).isPresent();
        assertThat(value(scrape, "tasklane_task_run_time_seconds_bucket", "queue=\"wk-basic\"", "type=\"noop\"", "le=\"+Inf\"")).isPresent();
        assertThat(value(scrape, "tasklane_claim_batch_size_count", "queue=\"wk-basic\"")).isPresent();
        assertThat(value(scrape, "tasklane_sse_subscribers", "stream=\"task\"")).isPresent();
        assertThat(value(scrape, "tasklane_sse_subscribers", "stream=\"queue\"")).isPresent();
        assertThat(value(scrape, "tasklane_sse_events_sent_total")).isPresent();
        assertThat(value(scrape, "tasklane_sse_catchups_total")).isPresent();
        assertThat(value(scrape, "tasklane_events_horizon_lag")).hasValueSatisfying(lag -> assertThat(lag).isNotNegative());
        assertThat(scrape).contains("r2dbc_pool_");
    }

    @Test
    void aQueueThatEmptiesReportsZeroInsteadOfVanishing() {
        Tasks tasks = new Tasks(api());
        String queue = TaskFixtures.uniqueQueue("metrics-drained");
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        awaitDepthRead(queue, "queued", 1.0);

        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        awaitDepthRead(queue, "queued", 0.0);

        String scrape = scrape();
        assertThat(value(scrape, "tasklane_queue_depth", "queue=\"" + queue + "\"", "state=\"queued\"")).contains(0.0);
        assertThat(value(scrape, "tasklane_queue_oldest_age_seconds", "queue=\"" + queue + "\"")).contains(0.0);
    }

    /**
     * A task became due at the later of its creation and its runAt; the longest-waiting one may
     * be of any priority, and tasks not yet due do not count however long ago they were created.
     */
    @Test
    void theOldestAgeIsThatOfTheLongestWaitingDueTaskOfAnyPriority() {
        Tasks tasks = new Tasks(api());
        String queue = TaskFixtures.uniqueQueue("metrics-oldest");
        tasks.enqueue(queue, "{\"type\": \"noop\", \"priority\": 50}");
        long lowest = tasks.enqueue(queue, "{\"type\": \"noop\", \"priority\": -50}").get("id").longValue();
        tasks.enqueue(queue, "{\"type\": \"noop\", \"runAt\": \"2020-01-01T00:00:00Z\"}");
        long later = tasks.enqueue(queue, "{\"type\": \"noop\", \"delaySeconds\": 3600}").get("id").longValue();
        Sql.update("UPDATE task SET created_at = now() - interval '10 minutes', run_at = now() - interval '2 minutes'"
                + " WHERE id = ?", lowest);
        Sql.update("UPDATE task SET created_at = now() - interval '1 day' WHERE id = ?", later);
        TaskRows.follow(lowest);
        TaskRows.follow(later);

        awaitDepthRead(queue, "queued", 4.0);

        assertThat(value(scrape(), "tasklane_queue_oldest_age_seconds", "queue=\"" + queue + "\""))
                .as("the age of the task due since two minutes ago, not of the one backdated to 2020 but created now")
                .hasValueSatisfying(age -> assertThat(age).isBetween(120.0, 180.0));
    }

    @Test
    void aTransactionLeftOpenHoldsTheLiveStreamBackAndTheHorizonLagShowsIt() throws Exception {
        Tasks tasks = new Tasks(api());
        String queue = TaskFixtures.uniqueQueue("metrics-lag");
        try (Connection open = TestDatabase.get().connect()) {
            open.setAutoCommit(false);
            try (Statement statement = open.createStatement()) {
                statement.execute("SELECT pg_current_xact_id()"); // older than the event below
            }
            tasks.enqueue(queue, "{\"type\": \"noop\"}");
            await().atMost(PATIENCE).until(() -> value(scrape(), "tasklane_events_horizon_lag").orElse(0.0) > 0);
            open.commit();
        }
        await().atMost(PATIENCE).until(() -> value(scrape(), "tasklane_events_horizon_lag").orElse(-1.0) == 0.0);
    }

    @Test
    void aQueuesLimitsAndWhatTheyHoldBackAreGauges() {
        Tasks tasks = new Tasks(api());
        String queue = TaskFixtures.uniqueQueue("metrics-flow");
        api().patch().uri("/api/v1/queues/{q}", queue).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"maxRunning\": 1, \"ratePerKey\": {\"count\": 3, \"periodSeconds\": 60}}")
                .exchange().expectStatus().isOk().expectBody().returnResult();
        for (int i = 0; i < 4; i++) {
            tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"k\"}");
        }
        api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"max\": 5}").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.tasks.length()").isEqualTo(1);
        await().atMost(PATIENCE).untilAsserted(() -> {
            depth.runOnce().block(PATIENCE);
            String scrape = scrape();
            String q = "queue=\"" + queue + "\"";
            assertThat(value(scrape, "tasklane_queue_held_back", q, "reason=\"maxRunning\"")).contains(3.0);
            assertThat(value(scrape, "tasklane_queue_held_back", q, "reason=\"maxRunningPerKey\"")).contains(0.0);
            assertThat(value(scrape, "tasklane_queue_held_back", q, "reason=\"rate\"")).contains(1.0);
            assertThat(value(scrape, "tasklane_queue_limit", q, "limit=\"maxRunning\"")).contains(1.0);
            assertThat(value(scrape, "tasklane_queue_limit", q, "limit=\"ratePerKeyCount\"")).contains(3.0);
            assertThat(value(scrape, "tasklane_queue_limit", q, "limit=\"ratePerKeyPeriodSeconds\"")).contains(60.0);
            assertThat(value(scrape, "tasklane_queue_limit", q, "limit=\"maxRunningPerKey\"")).isEmpty();
        });
    }

    /**
     * The Grafana dashboard in the prod overlay queries only what the service exports: after work
     * that makes every kind of metric appear (a retry, a snooze, a rescue, a queue held back), every
     * metric name in its expressions is in the scrape.
     */
    @Test
    void theGrafanaDashboardQueriesOnlyMetricsTheServiceExports() throws Exception {
        Tasks tasks = new Tasks(api());
        String queue = TaskFixtures.uniqueQueue("metrics-dashboard");
        long worked = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        long retried = tasks.enqueue("wk-retry", "{\"type\": \"sleep\", \"maxAttempts\": 2, \"payload\": {\"failAttempts\": 9}}")
                .get("id").longValue();
        api().patch().uri("/api/v1/queues/{q}", queue).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"maxRunning\": 1}").exchange().expectStatus().isOk().expectBody().returnResult();
        long snoozed = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        long rescued = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        JsonNode claimed = api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\"}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(claimed.get("tasks").get(0).get("id").longValue()).isEqualTo(snoozed);
        api().post().uri("/api/v1/tasks/{id}/snooze", snoozed).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"delaySeconds\": 3600}").exchange().expectStatus().isOk();
        Sql.update("UPDATE task SET state = 'running', attempt = 1, worker_id = 'gone', started_at = now(),"
                + " lease_expires_at = now() - interval '1 second' WHERE id = ?", rescued);
        TaskRows.follow(rescued);
        store.rescueExpired(500).collectList().block(PATIENCE);
        tasks.awaitState(worked, "succeeded", PATIENCE);
        tasks.awaitState(retried, "failed", PATIENCE);
        depth.runOnce().block(PATIENCE);
        Set<String> exported = scrape().lines().filter(line -> !line.startsWith("#") && !line.isBlank())
                .map(line -> line.split("[{ ]", 2)[0]).collect(Collectors.toSet());

        JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
        List<String> expressions = dashboard.findValues("expr").stream().map(JsonNode::stringValue).toList();
        List<String> queried = new ArrayList<>();
        for (String expression : expressions) {
            Matcher names = METRIC_NAME.matcher(expression);
            List<String> inThis = new ArrayList<>();
            while (names.find()) {
                inThis.add(names.group());
            }
            assertThat(inThis).as("metrics named in %s", expression).isNotEmpty();
            queried.addAll(inThis);
        }
        assertThat(queried).as("metrics the dashboard queries").isNotEmpty().allSatisfy(name ->
                assertThat(exported).as("exported metric names").contains(name));
        assertThat(queried).contains("tasklane_tasks_snoozed_total", "tasklane_tasks_rescued_total",
                "tasklane_queue_held_back", "tasklane_task_queue_time_seconds_bucket");
    }

    /**
     * Every call is timed with its route and status, refusals included; Spring Security's own
     * per-request observations (filter chain, authentication, authorization), which cost a tenth
     * of a single enqueue's CPU and added nothing a 401 or 403 status does not say, are off.
     */
    @Test
    void callsAreTimedByRouteAndStatusWithoutSecuritysPerRequestTimers() {
        String queue = TaskFixtures.uniqueQueue("metrics-http");
        new Tasks(api()).enqueue(queue, "{\"type\": \"noop\"}");
        anonymous().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"noop\"}").exchange().expectStatus().isUnauthorized();

        String scrape = scrape();

        assertThat(value(scrape, "http_server_requests_seconds_count", "method=\"POST\"", "status=\"201\"",
                "uri=\"/api/v1/queues/{queue}/tasks\"")).hasValueSatisfying(count -> assertThat(count).isPositive());
        assertThat(value(scrape, "http_server_requests_seconds_count", "method=\"POST\"", "status=\"401\"",
                "uri=\"UNKNOWN\"")).hasValueSatisfying(count -> assertThat(count).isPositive());
        assertThat(scrape.lines().filter(line -> line.startsWith("spring_security_"))).isEmpty();
    }

    @Test
    void theDepthReadPlansWithoutParallelWorkersOrJitEvenWhereThePlannerWouldUseThem() {
        // For the transaction only: parallel workers cost nothing and every scan reads the table.
        Mono<String> plan = db.sql("""
                SELECT set_config('parallel_setup_cost', '0', true), set_config('parallel_tuple_cost', '0', true),
                       set_config('min_parallel_table_scan_size', '0', true), set_config('enable_indexscan', 'off', true),
                       set_config('enable_indexonlyscan', 'off', true), set_config('enable_bitmapscan', 'off', true)
                """).then().then(db.sql("EXPLAIN " + QueueSql.DEPTH).map(row -> row.get(0, String.class)).all()
                .collect(Collectors.joining("\n")));

        assertThat(transactions.transactional(plan).block(PATIENCE)).as("the plan where workers are free")
                .contains("Parallel Seq Scan");
        assertThat(QueueDepthMetrics.withDepthPlanning(db, transactions, plan).block(PATIENCE)).as("the depth read's plan")
                .contains("Seq Scan").doesNotContain("Parallel", "Gather");
        assertThat(QueueDepthMetrics.withDepthPlanning(db, transactions, db.sql("SHOW jit").map(row -> row.get(0, String.class))
                .one()).block(PATIENCE)).as("JIT compilation in the depth read's transaction").isEqualTo("off");
        assertThat(db.sql("SHOW max_parallel_workers_per_gather").map(row -> row.get(0, String.class)).one()
                .block(PATIENCE)).as("the setting after the read's transaction").isNotEqualTo("0");
    }

    /**
     * Reads the depth now and waits until the scrape shows {@code expected}: the replica's own
     * timed read may have begun before the change and publish after this one.
     */
    private void awaitDepthRead(String queue, String state, double expected) {
        await().atMost(PATIENCE).untilAsserted(() -> {
            depth.runOnce().block(PATIENCE);
            assertThat(value(scrape(), "tasklane_queue_depth", "queue=\"" + queue + "\"", "state=\"" + state + "\""))
                    .contains(expected);
        });
    }

    private String scrape() {
        return anonymous().get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    /** The value of the one sample of {@code name} whose labels include every one given. */
    private static Optional<Double> value(String scrape, String name, String... labels) {
        List<String> samples = scrape.lines()
                .filter(line -> line.startsWith(name + "{") || line.startsWith(name + " "))
                .filter(line -> Arrays.stream(labels).allMatch(label -> line.contains(label)))
                .toList();
        assertThat(samples).as("samples of %s with %s", name, List.of(labels)).hasSizeLessThanOrEqualTo(1);
        return samples.stream().findFirst().map(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
    }
}
