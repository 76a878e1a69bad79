package dev.tasklane.worker;

import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.RawHttp;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.SlowClaims;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Whole replicas against one database: sharing a queue, and shutting down with work in flight. */
final class ReplicaIntegrationTests {

    @Test
    void twoReplicasRunFiveThousandTasksEachExactlyOnce() {
        String queue = TaskFixtures.uniqueQueue("exactly-once");
        try (ConfigurableApplicationContext a = Replicas.start(queue + ":32", Map.of());
             ConfigurableApplicationContext b = Replicas.start(queue + ":32", Map.of())) {
            WebTestClient client = client(a);
            String batch = IntStream.range(0, 1000).mapToObj(i -> "{\"type\": \"noop\"}")
                    .collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
            for (int i = 0; i < 5; i++) {
                client.post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(batch).exchange().expectStatus().isCreated().expectBody();
            }
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).until(() ->
                    Sql.column("SELECT count(*) FROM task WHERE queue = ? AND state = 'succeeded'", queue).get(0).equals("5000"));
            assertThat(Sql.column("SELECT count(*) FROM task WHERE queue = ? AND attempt <> 1", queue)).containsExactly("0");
            assertThat(Sql.column("SELECT count(*) FROM (SELECT e.task_id FROM task_event e JOIN task t ON t.id = e.task_id"
                    + " WHERE t.queue = ? AND e.name = 'running' GROUP BY e.task_id HAVING count(*) <> 1) x", queue))
                    .containsExactly("0");
            assertThat(Sql.column("SELECT count(DISTINCT e.detail->>'workerId') FROM task_event e JOIN task t ON t.id = e.task_id"
                    + " WHERE t.queue = ? AND e.name = 'running'", queue)).containsExactly("2");
        }
    }

    @Test
    void shutdownFinishesWhatItCanWithinTheDrainAndReleasesTheRest() throws Exception {
        String queue = TaskFixtures.uniqueQueue("drain");
        String pulled = TaskFixtures.uniqueQueue("drain-pull");
        ConfigurableApplicationContext replica = Replicas.start(queue + ":4",
                Map.of("spring.lifecycle.timeout-per-shutdown-phase", "5s"));
        Tasks tasks = new Tasks(client(replica));
        long quick = tasks.enqueue(queue, "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 1000}}").get("id").longValue();
        long slow = tasks.enqueue(queue, "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 600000, \"steps\": 600}}")
                .get("id").longValue();
        long polled = tasks.enqueue(pulled, "{\"type\": \"t\"}").get("id").longValue();
        tasks.awaitState(quick, "running", Duration.ofSeconds(10));
        tasks.awaitState(slow, "running", Duration.ofSeconds(10));

        try (SlowClaims slowClaims = SlowClaims.on(pulled, Duration.ofMillis(1500));
             Socket poll = RawHttp.post(Replicas.port(replica), "/api/v1/queues/" + pulled + "/claims",
                     "{\"workerId\": \"w\", \"waitSeconds\": 20}")) {
            Thread.sleep(300); // the long poll's claim is inside PostgreSQL when the drain begins
            long started = System.nanoTime();
            replica.close();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertThat(took).isLessThan(Duration.ofSeconds(15));
            String answer = new String(poll.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 200").contains("{\"tasks\":[]}");
        }

        assertThat(Sql.column("SELECT state || ' ' || attempt FROM task WHERE id = ?", quick)).containsExactly("succeeded 1");
        assertThat(Sql.column("SELECT state || ' ' || attempt || ' ' || last_error FROM task WHERE id = ?", slow))
                .containsExactly("queued 0 released on shutdown");
        List<String> last = Sql.column("SELECT name || ' ' || (detail->>'error') FROM task_event WHERE task_id = ?"
                + " ORDER BY id DESC LIMIT 1", slow);
        assertThat(last).containsExactly("queued released on shutdown");
        // The long poll's claim landed after the drain had answered it: released, not left running.
        assertThat(Sql.column("SELECT state || ' ' || attempt || ' ' || last_error FROM task WHERE id = ?", polled))
                .containsExactly("queued 0 released: the replica began draining while the claim ran");
        assertThat(Sql.column("SELECT count(*) FROM worker WHERE ? = ANY(queues)", queue)).containsExactly("0");
    }

    @Test
    void byDefaultAnHttpTaskToANameThatResolvesToLoopbackFailsWithoutARequest() throws Exception {
        String queue = TaskFixtures.uniqueQueue("http-refused");
        try (ConfigurableApplicationContext replica = Replicas.start(queue + ":1", Map.of());
             dev.tasklane.testsupport.TestHttpServer server = new dev.tasklane.testsupport.TestHttpServer()) {
            Tasks tasks = new Tasks(client(replica));
            long id = tasks.enqueue(queue, "{\"type\": \"http\", \"payload\": {\"url\": \"http://localhost:"
                    + server.port() + "/ok\"}}").get("id").longValue();
            JsonNode failed = tasks.awaitState(id, "failed", Duration.ofSeconds(20));
            assertThat(failed.get("attempt").intValue()).isEqualTo(1);
            assertThat(failed.get("lastError").stringValue()).contains("refused").contains("127.0.0.1");
            assertThat(server.requests()).isEmpty();
        }
    }

    @Test
    void aWakeUpCrossesReplicasAlsoAfterTheListenConnectionWasKilled() {
        String queue = TaskFixtures.uniqueQueue("cross-wake");
        Map<String, String> slowPoll = Map.of("tasklane.worker.poll-interval", "30s");
        try (ConfigurableApplicationContext enqueuer = Replicas.start("", slowPoll);
             ConfigurableApplicationContext worker = Replicas.start(queue + ":2", slowPoll)) {
            Tasks tasks = new Tasks(client(enqueuer));
            assertPickedUpQuickly(tasks, queue);

            List<String> before = listenerPids();
            assertThat(before).hasSizeGreaterThanOrEqualTo(2); // shared test contexts may listen too
            Sql.column("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tasklane-listener'"
                    + " AND datname = current_database()");
            await().atMost(Duration.ofSeconds(15)).until(() -> {
                List<String> now = listenerPids();
                return now.size() == before.size() && now.stream().noneMatch(before::contains);
            });
            assertPickedUpQuickly(tasks, queue);
        }
    }

    @Test
    void aHandlerWhoseLeaseLapsesWhileTheDatabaseIsGoneStopsAndTheTaskRunsOnce() throws Exception {
        String queue = TaskFixtures.uniqueQueue("lapse");
        TestDatabase.Coordinates database = TestDatabase.get();
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port());
             ConfigurableApplicationContext replica = Replicas.start(queue + ":1", Map.of(
                     "spring.r2dbc.url", "r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database.database(),
                     "tasklane.worker.lease", "2s",
                     "tasklane.rescue-interval", "500ms",
                     "spring.r2dbc.pool.max-acquire-time", "1s",
                     "spring.r2dbc.pool.max-create-connection-time", "1s"))) {
            Tasks tasks = new Tasks(client(replica));
            long id = tasks.enqueue(queue, "{\"type\": \"sleep\", \"maxAttempts\": 3,"
                    + " \"payload\": {\"durationMs\": 6000, \"steps\": 30}}").get("id").longValue();
            tasks.awaitTask(id, Duration.ofSeconds(10), t -> t.get("progress").get("percent").isNumber());

            proxy.cut();
            Thread.sleep(4000); // twice the lease: the outage itself is what is tested
            Instant restored = Instant.now();
            proxy.restore();

            JsonNode done = tasks.awaitState(id, "succeeded", Duration.ofSeconds(30));
            assertThat(done.get("attempt").intValue()).isEqualTo(2);
            assertThat(Sql.column("SELECT name FROM task_event WHERE task_id = ? AND name IN ('succeeded', 'failed')", id))
                    .containsExactly("succeeded");
            assertThat(Sql.column("SELECT detail->>'error' FROM task_event WHERE task_id = ? AND name = 'queued'"
                    + " ORDER BY id", id)).containsExactly(null, "lease expired");
            // The first attempt's handler stopped: it reported nothing once the database was back.
            assertThat(Sql.column("SELECT count(*) FROM task_event WHERE task_id = ? AND attempt = 1"
                    + " AND name = 'progress' AND at > ?::timestamptz", id, restored.toString())).containsExactly("0");
        }
    }

    private static void assertPickedUpQuickly(Tasks tasks, String queue) {
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", Duration.ofSeconds(10));
        assertThat(Duration.between(Tasks.time(done, "createdAt"), Tasks.time(done, "startedAt")))
                .isLessThan(Duration.ofSeconds(1));
    }

    private static List<String> listenerPids() {
        return Sql.column("SELECT pid::text FROM pg_stat_activity WHERE application_name = 'tasklane-listener'"
                + " AND datname = current_database()");
    }

    private static WebTestClient client(ConfigurableApplicationContext replica) {
        return Replicas.client(replica);
    }
}
