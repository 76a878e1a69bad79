package dev.tasklane.config;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.SlowClaims;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The statement timeout is kept by PostgreSQL, not only by the service: a claim the service gave
 * up on never commits afterwards, a connection that stops answering is dropped before anything
 * acts on the timeout, and a write whose outcome nobody can know says so. One replica straight
 * to the database with a pool of two, one behind a TCP proxy; both with a 3 s timeout.
 */
final class DatabaseBoundsIntegrationTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    private static ConfigurableApplicationContext direct;
    private static TcpProxy proxy;
    private static ConfigurableApplicationContext behindProxy;

    @BeforeAll
    static void startReplicas() throws Exception {
        direct = Replicas.start("", Map.of(
                "tasklane.database.statement-timeout", "3s",
                "spring.r2dbc.pool.initial-size", "2",
                "spring.r2dbc.pool.max-size", "2"));
        TestDatabase.Coordinates server = TestDatabase.get();
        proxy = new TcpProxy(server.host(), server.port());
        behindProxy = Replicas.start("", Map.of(
                "spring.r2dbc.url", "r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + server.database(),
                "spring.r2dbc.pool.max-acquire-time", "2s",
                "spring.r2dbc.pool.max-create-connection-time", "2s",
                "tasklane.database.statement-timeout", "3s"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (behindProxy != null) {
            behindProxy.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (direct != null) {
            direct.close();
        }
    }

    @Test
    void aClaimWaitingOnTheQueueLockPastTheTimeoutIsEndedByPostgresAndNeverCommitsLater() throws Exception {
        WebTestClient api = Replicas.client(direct);
        String queue = TaskFixtures.uniqueQueue("fq");
        api.patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.parseMediaType("application/merge-patch+json"))
                .bodyValue("{\"maxRunning\": 5}").exchange().expectStatus().isOk();
        long id = new Tasks(api).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();

        try (Connection locker = TestDatabase.get().connect(); Statement statement = locker.createStatement()) {
            locker.setAutoCommit(false);
            statement.execute("SELECT * FROM queue WHERE name = '" + queue + "' FOR UPDATE");
            long started = System.nanoTime();
            EntityExchangeResult<JsonNode> answer = api.post().uri("/api/v1/queues/{q}/claims", queue)
                    .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"workerId\": \"wA\"}")
                    .exchange().expectStatus().isEqualTo(503).expectBody(JsonNode.class).returnResult();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertThat(took).isBetween(TIMEOUT.minusMillis(500), TIMEOUT.plusSeconds(3));
            // ended by PostgreSQL, so known not to have happened: the plain 503
            assertThat(answer.getResponseBody().get("title").stringValue()).isEqualTo("Database unavailable");
            assertThat(waitingForLocks(locker)).as("lock waits left behind").isZero();
            Thread.sleep(1_000); // the lock is held well past the timeout, as in the report
            locker.commit();
        }
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> stateOf(id), state -> state.equals("queued 0 null"));
    }

    @Test
    void aClaimOnAConnectionThatStopsAnsweringLeavesNoTaskRunningUnheld() throws Exception {
        String queue = TaskFixtures.uniqueQueue("stalled");
        WebTestClient api = Replicas.client(behindProxy);
        long id = new Tasks(api).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofSeconds(5))) {
            Thread stall = new Thread(() -> {
                try {
                    Thread.sleep(500); // the claim is inside PostgreSQL by then, sleeping in its trigger
                } catch (InterruptedException e) {
                    return;
                }
                proxy.stallOpen();
            });
            stall.start();
            try {
                long started = System.nanoTime();
                JsonNode problem = api.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"workerId\": \"wS\"}").exchange().expectStatus().isEqualTo(503)
                        .expectBody(JsonNode.class).returnResult().getResponseBody();
                // nothing of a claim is left unknown: it is released once its statement has ended
                assertThat(problem.get("title").stringValue()).isEqualTo("Database unavailable");
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
                // PostgreSQL ended the claim at its own timeout, though its error never reached the service
                await().atMost(TIMEOUT.plusSeconds(2)).until(() -> claimsRunning(queue) == 0);
                await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6))
                        .until(() -> stateOf(id), state -> state.equals("queued 0 null"));
            } finally {
                stall.join();
                proxy.restore();
            }
        }
    }

    @Test
    void anEnqueueUnansweredPastTheTimeoutSaysItsOutcomeIsUnknownAndItsKeyMakesTheRetrySafe() throws Exception {
        String queue = TaskFixtures.uniqueQueue("unknown");
        WebTestClient api = Replicas.client(behindProxy);
        new Tasks(api).enqueue(queue, "{\"type\": \"t\"}"); // every pooled connection has been used: stall them all
        proxy.stallOpen();
        try {
            EntityExchangeResult<JsonNode> answer = api.post().uri("/api/v1/queues/{q}/tasks", queue)
                    .header("Idempotency-Key", "order-17").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"t\"}").exchange()
                    .expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals("Idempotency-Key", "order-17")
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectBody(JsonNode.class).returnResult();
            assertThat(answer.getResponseBody().get("title").stringValue()).isEqualTo("Outcome unknown");
            assertThat(answer.getResponseBody().get("outcome").stringValue()).isEqualTo("unknown");
            assertThat(answer.getResponseBody().get("detail").stringValue()).contains("unknown").doesNotContain("retry shortly");
        } finally {
            proxy.restore();
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() ->
                api.post().uri("/api/v1/queues/{q}/tasks", queue).header("Idempotency-Key", "order-17")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"type\": \"t\"}")
                        .exchange().returnResult(String.class).getStatus().is2xxSuccessful());
        assertThat(Sql.column("SELECT count(*) FROM task WHERE queue = ? AND idempotency_key = 'order-17'", queue))
                .containsExactly("1");
    }

    @Test
    void anEnqueueWhoseConnectionBreaksUnderItSaysItsOutcomeIsUnknown() throws Exception {
        String queue = TaskFixtures.uniqueQueue("broken");
        WebTestClient api = Replicas.client(behindProxy);
        try (Connection locker = TestDatabase.get().connect(); Statement statement = locker.createStatement()) {
            locker.setAutoCommit(false);
            statement.execute("LOCK TABLE task IN ACCESS EXCLUSIVE MODE");
            java.util.concurrent.CompletableFuture<EntityExchangeResult<JsonNode>> answer =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> api.post().uri("/api/v1/queues/{q}/tasks", queue)
                            .header("Idempotency-Key", "broken-1").contentType(MediaType.APPLICATION_JSON)
                            .bodyValue("{\"type\": \"t\"}").exchange().expectStatus().isEqualTo(503)
                            .expectBody(JsonNode.class).returnResult());
            try {
                // the enqueue waits on the lock inside PostgreSQL when its connection breaks: it may still commit
                await().atMost(Duration.ofSeconds(2)).until(() -> Integer.parseInt(Sql.column(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                                + " AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO task%'").get(0)) > 0);
                proxy.cut();
                JsonNode problem = answer.get(10, java.util.concurrent.TimeUnit.SECONDS).getResponseBody();
                assertThat(problem.get("title").stringValue()).isEqualTo("Outcome unknown");
                assertThat(problem.get("detail").stringValue()).contains("idempotency key");
            } finally {
                proxy.restore();
                locker.rollback();
            }
        }
    }

    private static int waitingForLocks(Connection except) throws Exception {
        try (Statement statement = except.createStatement()) {
            var rows = statement.executeQuery("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                    + " WHERE NOT l.granted AND a.datname = current_database() AND l.pid <> pg_backend_pid()");
            rows.next();
            return rows.getInt(1);
        }
    }

    private static int claimsRunning(String queue) {
        List<String> running = Sql.column("SELECT count(*) FROM pg_stat_activity WHERE state <> 'idle'"
                + " AND pid <> pg_backend_pid() AND query LIKE '%tasklane_claim%' AND datname = current_database()");
        return Integer.parseInt(running.get(0));
    }

    private static String stateOf(long id) {
        return Sql.column("SELECT state || ' ' || attempt || ' ' || coalesce(worker_id, 'null') FROM task WHERE id = ?", id).get(0);
    }
}
