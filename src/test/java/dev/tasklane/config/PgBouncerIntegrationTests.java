package dev.tasklane.config;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import dev.tasklane.testsupport.PgBouncer;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The service behind a real PgBouncer in transaction mode, set up as the README says: the R2DBC
 * URL through PgBouncer with {@code preparedStatementCacheQueries=0}, the LISTEN (and migration)
 * URL straight to PostgreSQL. One replica on a database of its own, created and migrated by the
 * replica itself, walks the enqueue, in-process worker, pull and event-stream paths.
 */
final class PgBouncerIntegrationTests {

    private static final String QUEUE = "bounced";
    private static final String PULL_QUEUE = "bounced-pull";

    private static PgBouncer bouncer;
    private static String database;
    private static ConfigurableApplicationContext replica;
    private static WebTestClient api;

    @BeforeAll
    static void startReplicaBehindPgBouncer() throws Exception {
        bouncer = PgBouncer.startInTransactionMode();
        TestDatabase.Coordinates server = TestDatabase.get();
        database = server.database() + "_bouncer_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
        replica = Replicas.start(QUEUE + ":8", Map.of(
                "spring.r2dbc.url", bouncer.r2dbcUrl(database, "preparedStatementCacheQueries=0"),
                "tasklane.listen-url", "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + database,
                "tasklane.database.statement-timeout", "3s"));
        api = Replicas.client(replica);
    }

    @AfterAll
    static void stop() throws Exception {
        if (replica != null) {
            replica.close();
        }
        if (bouncer != null) {
            bouncer.close();
        }
        if (database != null) {
            try (Connection admin = TestDatabase.get().connect(); Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS \"" + database + "\" WITH (FORCE)");
            }
        }
    }

    @Test
    void tasksEnqueuedOneByOneAndInBatchesAreAllWorkedThroughPgBouncer() {
        Tasks tasks = new Tasks(api);
        List<Long> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ids.add(tasks.enqueue(QUEUE, "{\"type\": \"noop\", \"idempotencyKey\": \"one-" + i + "\"}").get("id").longValue());
        }
        StringBuilder batch = new StringBuilder("{\"tasks\": [");
        for (int i = 0; i < 500; i++) {
            batch.append(i == 0 ? "" : ",").append("{\"type\": \"noop\", \"payload\": {\"n\": ").append(i).append("}}");
        }
        JsonNode created = api.post().uri("/api/v1/queues/{q}/tasks/batch", QUEUE).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(batch.append("]}").toString()).exchange().expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        created.get("tasks").forEach(task -> ids.add(task.get("id").longValue()));

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> succeeded(ids) == ids.size());
        // A replayed key answers the first task, through whichever server connection.
        JsonNode replay = api.post().uri("/api/v1/queues/{q}/tasks", QUEUE).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"noop\", \"idempotencyKey\": \"one-0\"}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(replay.get("id").longValue()).isEqualTo(ids.get(0));
    }

    private static long succeeded(List<Long> ids) throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        try (Connection connection = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             PreparedStatement count = connection.prepareStatement(
                     "SELECT count(*) FROM task WHERE state = 'succeeded' AND id = ANY(?)")) {
            count.setArray(1, connection.createArrayOf("bigint", ids.toArray()));
            try (ResultSet rows = count.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    @Test
    void aPullWorkerClaimsHeartbeatsAndCompletesThroughPgBouncer() {
        Tasks tasks = new Tasks(api);
        long id = tasks.enqueue(PULL_QUEUE, "{\"type\": \"remote\"}").get("id").longValue();
        JsonNode claimed = api.post().uri("/api/v1/queues/{q}/claims", PULL_QUEUE).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"bounced-worker\", \"waitSeconds\": 5}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(claimed.get("tasks").get(0).get("id").longValue()).isEqualTo(id);
        api.post().uri("/api/v1/tasks/{id}/heartbeat", id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"bounced-worker\", \"leaseSeconds\": 60}").exchange().expectStatus().isOk();
        api.post().uri("/api/v1/tasks/{id}/complete", id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"bounced-worker\", \"result\": {\"ok\": true}}").exchange().expectStatus().isOk();
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("succeeded");
    }

    @Test
    void aTaskStreamAndTheLiveStreamCarryEveryEventThroughPgBouncer() {
        SseClient sse = new SseClient(Replicas.port(replica));
        Tasks tasks = new Tasks(api);
        var live = sse.events("/api/v1/events?queue=" + QUEUE, null).replay();
        var liveEvents = SseClient.until(live.autoConnect(), e -> "succeeded".equals(e.event())).toFuture();
        try {
            Thread.sleep(500); // the live stream starts from now: let it open first
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        long id = tasks.enqueue(QUEUE, "{\"type\": \"noop\"}").get("id").longValue();
        List<SseClient.Event> events = SseClient.until(sse.events("/api/v1/tasks/" + id + "/events", null),
                e -> "succeeded".equals(e.event())).block(Duration.ofSeconds(30));
        assertThat(events).extracting(SseClient.Event::event).containsExactly("queued", "running", "succeeded");
        assertThat(liveEvents.join()).extracting(SseClient.Event::event).containsSubsequence("queued", "running", "succeeded");
    }

    @Test
    void aStatementThatHangsBehindPgBouncerFailsAtTheTimeoutAndTheReplicaRecovers() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        try (Connection locker = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             Statement statement = locker.createStatement()) {
            locker.setAutoCommit(false);
            statement.execute("LOCK TABLE task IN ACCESS EXCLUSIVE MODE");
            long started = System.nanoTime();
            api.get().uri("/api/v1/tasks?queue=" + QUEUE + "&limit=1").exchange().expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectHeader().contentType("application/problem+json");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
            locker.rollback();
        }
        long id = new Tasks(api).enqueue(QUEUE, "{\"type\": \"noop\"}").get("id").longValue();
        new Tasks(api).awaitState(id, "succeeded", Duration.ofSeconds(30));
    }

    @Test
    void aClaimWaitingOnTheQueueLockBehindPgBouncerIsCancelledAndNeverCommitsLater() throws Exception {
        String queue = "bounced-flow";
        api.patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.parseMediaType("application/merge-patch+json"))
                .bodyValue("{\"maxRunning\": 5}").exchange().expectStatus().isOk();
        long id = new Tasks(api).enqueue(queue, "{\"type\": \"remote\"}").get("id").longValue();
        TestDatabase.Coordinates server = TestDatabase.get();
        try (Connection locker = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             Statement statement = locker.createStatement()) {
            locker.setAutoCommit(false);
            statement.execute("SELECT * FROM queue WHERE name = '" + queue + "' FOR UPDATE");
            // No bound on the server for a statement outside a transaction here (a startup parameter
            // cannot pass PgBouncer): the service's timer cancels it, and answers once it has ended.
            api.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"wB\"}").exchange().expectStatus().isEqualTo(503);
            Thread.sleep(1_000);
            locker.commit();
        }
        Thread.sleep(2_000);
        assertThat(new Tasks(api).get(id).get("state").stringValue()).isEqualTo("queued");
        assertThat(new Tasks(api).get(id).get("attempt").intValue()).isZero();
    }

    @Test
    void aClaimWhoseConnectionToPgBouncerIsPartitionedNeverCommitsAfterItsRelease() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        String queue = "bounced-stalled";
        try (TcpProxy proxy = new TcpProxy("127.0.0.1", bouncer.port());
             Connection admin = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             Statement statement = admin.createStatement()) {
            // every claim on the queue sleeps 7 s inside PostgreSQL, past the 3 s bound
            statement.execute("CREATE OR REPLACE FUNCTION slow_stalled_claims() RETURNS trigger LANGUAGE plpgsql"
                    + " AS $$ BEGIN PERFORM pg_sleep(7); RETURN NEW; END $$");
            statement.execute("CREATE TRIGGER slow_stalled_claims BEFORE UPDATE ON task FOR EACH ROW WHEN (NEW.queue = '"
                    + queue + "' AND OLD.state = 'queued' AND NEW.state = 'running') EXECUTE FUNCTION slow_stalled_claims()");
            try (ConfigurableApplicationContext behind = Replicas.start("", Map.of(
                    "spring.r2dbc.url", "r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database,
                    "tasklane.listen-url", "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + database,
                    "tasklane.database.statement-timeout", "3s",
                    "spring.r2dbc.pool.max-acquire-time", "2s",
                    "spring.r2dbc.pool.max-create-connection-time", "2s"))) {
                WebTestClient client = Replicas.client(behind);
                long id = new Tasks(client).enqueue(queue, "{\"type\": \"remote\"}").get("id").longValue();
                Thread stall = new Thread(() -> {
                    try {
                        Thread.sleep(500);
                        proxy.partition(); // the cancel request cannot pass either
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                stall.start();
                client.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"workerId\": \"wS\"}").exchange().expectStatus().isEqualTo(503);
                stall.join();
                Thread.sleep(5_000); // past the moment the claim's sleep would have ended and committed
                proxy.restore();
                // PostgreSQL ended the claim at the bound its transaction set: it never committed
                try (Statement check = admin.createStatement();
                     java.sql.ResultSet row = check.executeQuery("SELECT t.state, t.attempt, (SELECT count(*) FROM task_event e"
                             + " WHERE e.task_id = t.id AND e.name = 'running') FROM task t WHERE t.id = " + id)) {
                    row.next();
                    assertThat(row.getString(1) + " " + row.getInt(2) + ", runs " + row.getInt(3)).isEqualTo("queued 0, runs 0");
                }
            } finally {
                statement.execute("DROP TRIGGER IF EXISTS slow_stalled_claims ON task");
            }
        }
    }

    @Test
    void limitsByKeySetBehindTheReplicasBackStillHoldBehindPgBouncer() throws Exception {
        // the one-call claim refuses, which aborts its transaction; the claim by key must not run in that one
        String queue = "bounced-switch";
        api.patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.parseMediaType("application/merge-patch+json"))
                .bodyValue("{\"maxRunning\": 10}").exchange().expectStatus().isOk();
        for (int i = 0; i < 2; i++) {
            new Tasks(api).enqueue(queue, "{\"type\": \"remote\", \"concurrencyKey\": \"k\"}");
        }
        TestDatabase.Coordinates server = TestDatabase.get();
        try (Connection admin = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             Statement statement = admin.createStatement()) {
            statement.execute("UPDATE queue SET max_running_per_key = 1 WHERE name = '" + queue + "'");
        }
        JsonNode claimed = api.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"wT\", \"max\": 10}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(claimed.get("tasks")).hasSize(1);
    }

    @Test
    void aTransactionBehindPgBouncerSetsItsOwnBounds() {
        // a claim on a queue limited per key is a transaction of statements: it waits on the queue's
        // lock under the lock_timeout its transaction set for itself
        String queue = "bounced-keys";
        api.patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.parseMediaType("application/merge-patch+json"))
                .bodyValue("{\"maxRunningPerKey\": 1}").exchange().expectStatus().isOk();
        long id = new Tasks(api).enqueue(queue, "{\"type\": \"remote\", \"concurrencyKey\": \"k\"}").get("id").longValue();
        TestDatabase.Coordinates server = TestDatabase.get();
        try (Connection locker = DriverManager.getConnection(server.jdbcUrl(database), server.user(), server.password());
             Statement statement = locker.createStatement()) {
            locker.setAutoCommit(false);
            statement.execute("SELECT * FROM queue WHERE name = '" + queue + "' FOR UPDATE");
            long started = System.nanoTime();
            JsonNode problem = api.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"wK\"}").exchange().expectStatus().isEqualTo(503)
                    .expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4)); // before the service's own timer
            assertThat(problem.get("title").stringValue()).isEqualTo("Database unavailable");
            locker.commit();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(new Tasks(api).get(id).get("state").stringValue()).isEqualTo("queued");
    }

    @Test
    void withADirectListenUrlTheServiceUsesUnnamedStatementsByItself() {
        TestDatabase.Coordinates server = TestDatabase.get();
        try (ConfigurableApplicationContext second = Replicas.start("", Map.of(
                "spring.r2dbc.url", bouncer.r2dbcUrl(database, ""),
                "tasklane.listen-url", "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + database))) {
            WebTestClient client = Replicas.client(second);
            String queue = "bounced-unnamed";
            reactor.core.publisher.Flux.range(0, 40)
                    .flatMap(i -> reactor.core.publisher.Mono.fromRunnable(() -> client.post()
                            .uri("/api/v1/queues/{q}/tasks/batch", queue).contentType(MediaType.APPLICATION_JSON)
                            .bodyValue("{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\"}]}").exchange()
                            .expectStatus().isCreated())
                            .subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()), 8)
                    .blockLast(Duration.ofSeconds(60));
            assertThat(client.get().uri("/api/v1/tasks?queue={q}&limit=100", queue).exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks")).hasSize(80);
        }
    }

    @Test
    void theProbeTellsPgBouncerFromADirectConnection() {
        TestDatabase.Coordinates server = TestDatabase.get();
        assertThat(PoolerProbe.probe("jdbc:postgresql://127.0.0.1:" + bouncer.port() + "/" + database, server.user(),
                server.password())).isEqualTo(PoolerProbe.Verdict.SHARED);
        assertThat(PoolerProbe.probe(server.jdbcUrl(database), server.user(), server.password()))
                .isEqualTo(PoolerProbe.Verdict.OWN);
        assertThat(PoolerProbe.probe(server.jdbcUrl(database + "_missing"), server.user(), server.password()))
                .isEqualTo(PoolerProbe.Verdict.UNKNOWN);
    }

    @Test
    void withoutADirectListenUrlTheServiceRefusesToStartAndSaysWhatToSet() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Replicas.start("", Map.of(
                        "spring.r2dbc.url", bouncer.r2dbcUrl(database, ""))).close())
                .hasStackTraceContaining("TASKLANE_LISTEN_URL")
                .hasStackTraceContaining("preparedStatementCacheQueries=0");
    }
}
