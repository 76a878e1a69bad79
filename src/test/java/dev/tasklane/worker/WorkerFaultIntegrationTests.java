package dev.tasklane.worker;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TestHandlers;
import dev.tasklane.testsupport.TestHttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The worker core under faults, on two replicas in this JVM: A works the queues in-process and
 * reaches the database only through a TCP proxy that the tests cut or stall; B runs the rescuer
 * and serves pull workers, straight to the database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
final class WorkerFaultIntegrationTests {

    private static final Duration LEASE = Duration.ofSeconds(6);
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final String mixed = TaskFixtures.uniqueQueue("fault-mixed");
    private final String outcomes = TaskFixtures.uniqueQueue("fault-outcome");
    private final String stalled = TaskFixtures.uniqueQueue("fault-stall");
    private final String herd = TaskFixtures.uniqueQueue("fault-herd");
    private final String herdPull = TaskFixtures.uniqueQueue("fault-herd-pull");
    private final JsonMapper json = JsonMapper.builder().build();

    private TcpProxy proxy;
    private ConfigurableApplicationContext a;
    private ConfigurableApplicationContext b;
    private TestHttpServer server;

    @BeforeAll
    void startReplicas() throws IOException {
        TestDatabase.Coordinates database = TestDatabase.get();
        proxy = new TcpProxy(database.host(), database.port());
        server = new TestHttpServer();
        a = Replicas.start(mixed + ":64," + outcomes + ":40," + stalled + ":1," + herd + ":16", Map.ofEntries(
                Map.entry("spring.r2dbc.url", "r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database.database()),
                Map.entry("spring.r2dbc.pool.max-acquire-time", "3s"),
                Map.entry("spring.r2dbc.pool.max-create-connection-time", "2s"),
                Map.entry("tasklane.worker.lease", LEASE.toSeconds() + "s"),
                Map.entry("tasklane.http.allowed-hosts", "127.0.0.1"),
                Map.entry("tasklane.retry.base-delay", "200ms"),
                Map.entry("tasklane.retry.max-delay", "1s"),
                // its own rescuer would run behind the proxy: B's does the rescuing
                Map.entry("tasklane.maintenance.enabled", "false")));
        b = Replicas.start("", Map.of("tasklane.rescue-interval", "500ms"));
    }

    @AfterAll
    void stopReplicas() throws IOException {
        proxy.restore();
        b.close();
        a.close();
        proxy.close();
        server.close();
    }

    @AfterEach
    void reconnect() {
        proxy.restore();
    }

    @Test
    void threeThousandNoopsSucceedOnceBesideHttpTasksWhoseServerAnswersBinaryBodies() {
        Tasks tasks = new Tasks(client(a));
        List<Long> succeeding = new ArrayList<>();
        List<Long> failing = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            succeeding.add(httpTask(tasks, "/binary"));
            failing.add(httpTask(tasks, "/binary-500"));
        }
        String noops = IntStream.range(0, 1000).mapToObj(i -> "{\"type\": \"noop\"}")
                .collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
        for (int i = 0; i < 3; i++) {
            client(a).post().uri("/api/v1/queues/" + mixed + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(noops).exchange().expectStatus().isCreated().expectBody();
        }

        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> Sql.column(
                "SELECT count(*) FROM task WHERE queue = ? AND state IN ('succeeded', 'failed')", mixed).get(0)
                .equals("3020"));
        assertThat(Sql.column("SELECT state || ' ' || attempt || ' ' || count(*) FROM task WHERE queue = ?"
                + " AND type = 'noop' GROUP BY state, attempt", mixed)).containsExactly("succeeded 1 3000");
        assertThat(Sql.column("SELECT count(*) FROM task_event e JOIN task t ON t.id = e.task_id WHERE t.queue = ?"
                + " AND e.name = 'running'", mixed)).containsExactly("3020");
        for (long id : succeeding) {
            JsonNode result = tasks.get(id).get("result");
            assertThat(result.get("status").intValue()).isEqualTo(200);
            assertThat(result.get("bodyEncoding").stringValue()).isEqualTo("base64");
            assertThat(Base64.getDecoder().decode(result.get("body").stringValue())).containsExactly(TestHttpServer.BINARY);
        }
        for (long id : failing) {
            JsonNode task = tasks.get(id);
            assertThat(task.get("state").stringValue()).isEqualTo("failed");
            assertThat(task.get("lastError").stringValue()).isEqualTo("HTTP 500: 8 bytes of binary content");
        }
    }

    @Test
    void outcomesWhoseWritesTheNetworkCutsAreWrittenOnceItIsBackAndNothingRunsTwice() throws InterruptedException {
        Tasks tasks = new Tasks(client(a));
        String forty = IntStream.range(0, 40).mapToObj(i -> "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 1500}}")
                .collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
        client(a).post().uri("/api/v1/queues/" + outcomes + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(forty).exchange().expectStatus().isCreated().expectBody();
        await().atMost(PATIENCE).until(() -> Sql.column("SELECT count(*) FROM task WHERE queue = ? AND state = 'running'",
                outcomes).get(0).equals("40"));

        Thread.sleep(1000); // the handlers end 1.5 s after their claim: the cut spans that moment
        proxy.cut();
        Thread.sleep(1200);
        proxy.restore();

        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> Sql.column(
                "SELECT count(*) FROM task WHERE queue = ? AND state = 'succeeded'", outcomes).get(0).equals("40"));
        assertThat(Sql.column("SELECT DISTINCT attempt FROM task WHERE queue = ?", outcomes)).containsExactly("1");
        assertThat(Sql.column("SELECT count(*) FROM task_event e JOIN task t ON t.id = e.task_id WHERE t.queue = ?"
                + " AND e.name = 'running'", outcomes)).containsExactly("40");
        assertThat(tasks).isNotNull();
    }

    @Test
    void aHandlerWhoseConnectionStallsIsStoppedBeforeItsLeaseEndsAndItsNextRunNeverOverlapsIt() throws Exception {
        Tasks onA = new Tasks(client(a));
        long id = onA.enqueue(stalled, "{\"type\": \"test.ticker\", \"payload\": {\"ms\": 60000}}").get("id").longValue();
        onA.awaitTask(id, PATIENCE, t -> t.get("progress").get("message").isString());

        long stalledAt = System.nanoTime();
        proxy.stall(); // renewals, progress and outcomes of A now hang without an error
        // B's rescuer takes the task back once its lease has expired: A can neither renew nor complete it.
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> Sql.column(
                "SELECT state || ' ' || coalesce(last_error, '') FROM task WHERE id = ?", id).get(0)
                .equals("queued lease expired"));
        JsonNode second = post(b, "/api/v1/queues/" + stalled + "/claims", "{\"workerId\": \"puller\"}")
                .get("tasks").get(0);
        long secondRunStarted = System.nanoTime();
        assertThat(second.get("attempt").intValue()).isEqualTo(2);

        TestHandlers.Run first = TestHandlers.runs().stream().filter(run -> run.taskId() == id).findFirst()
                .orElseThrow(() -> new AssertionError("the first run of the handler never stopped"));
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(first.stoppedNanos()).isLessThan(secondRunStarted);
        assertThat(first.stoppedNanos() - stalledAt).as("stopped before a lease renewed just before the stall ends")
                .isLessThan(LEASE.toNanos());

        proxy.restore(); // whatever A sent while stalled now reaches the database, and must change nothing
        Thread.sleep(1500);
        post(b, "/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"puller\", \"leaseId\": \""
                + second.get("leaseId").stringValue() + "\"}");
        long secondRunning = Long.parseLong(Sql.column("SELECT max(id) FROM task_event WHERE task_id = ?"
                + " AND name = 'running'", id).get(0));
        assertThat(Sql.column("SELECT count(*) FROM task_event WHERE task_id = ? AND attempt = 1 AND id > ?",
                id, secondRunning)).containsExactly("0");
        assertThat(Sql.column("SELECT name FROM task_event WHERE task_id = ? AND name <> 'progress' ORDER BY id", id))
                .containsExactly("queued", "running", "queued", "running", "succeeded");
    }

    @Test
    void twoHundredLongPollsBesideSixteenHandlersLoseNoLeaseAndReadinessStaysUp() throws Exception {
        // Sixteen handlers that outlive a lease renewal (every 2 s), reporting progress as they go.
        String sleeps = IntStream.range(0, 16).mapToObj(i -> "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 3000,"
                + " \"steps\": 10}}").collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
        client(a).post().uri("/api/v1/queues/" + herd + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(sleeps).exchange().expectStatus().isCreated().expectBody();

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        String base = "http://127.0.0.1:" + Replicas.port(a);
        AtomicBoolean polling = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        ExecutorService pollers = Executors.newFixedThreadPool(201);
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int p = 0; p < 200; p++) {
            String worker = "herd-" + p;
            running.add(CompletableFuture.runAsync(() -> {
                while (polling.get()) {
                    try {
                        JsonNode claimed = json.readTree(send(http, base + "/api/v1/queues/" + herdPull + "/claims",
                                "{\"workerId\": \"" + worker + "\", \"waitSeconds\": 2}", 200));
                        for (JsonNode task : claimed.get("tasks")) {
                            send(http, base + "/api/v1/tasks/" + task.get("id").longValue() + "/complete",
                                    "{\"workerId\": \"" + worker + "\", \"leaseId\": \"" + task.get("leaseId").stringValue()
                                            + "\"}", 200);
                        }
                    } catch (Exception e) {
                        failures.add(worker + ": " + e);
                        return;
                    }
                }
            }, pollers));
        }
        List<Integer> readiness = new ArrayList<>();
        Tasks onB = new Tasks(client(b));
        for (int round = 0; round < 20; round++) { // 4 s, tasks trickling in for the polls
            if (round % 2 == 0) {
                for (int i = 0; i < 10; i++) {
                    onB.enqueue(herdPull, "{\"type\": \"pulled\"}");
                }
            }
            readiness.add(http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/health/readiness"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode());
            Thread.sleep(200);
        }
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> Sql.column(
                "SELECT count(*) FROM task WHERE queue IN (?, ?) AND state = 'succeeded'", herd, herdPull).get(0)
                .equals("116"));
        polling.set(false);
        CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        pollers.shutdown();

        assertThat(failures).isEmpty();
        assertThat(readiness).containsOnly(200);
        assertThat(Sql.column("SELECT DISTINCT attempt FROM task WHERE queue IN (?, ?)", herd, herdPull))
                .containsExactly("1");
        assertThat(Sql.column("SELECT count(*) FROM task_event e JOIN task t ON t.id = e.task_id"
                + " WHERE t.queue = ? AND e.name = 'running'", herd)).containsExactly("16");
        // A poll that ended while its claim ran had that claim released (not counted): nothing else went back.
        assertThat(Sql.column("SELECT DISTINCT e.detail->>'error' FROM task_event e JOIN task t ON t.id = e.task_id"
                + " WHERE t.queue IN (?, ?) AND e.detail->>'error' IS NOT NULL", herd, herdPull))
                .allMatch(error -> error.startsWith("released: "));
    }

    private String send(HttpClient http, String url, String body, int expected) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
                .header(HttpHeaders.AUTHORIZATION, "Bearer " + IntegrationTest.TOKEN)
                .header(HttpHeaders.CONTENT_TYPE, MediaType.APPLICATION_JSON_VALUE)
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != expected) {
            throw new IllegalStateException(url + " answered " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    private long httpTask(Tasks tasks, String path) {
        return tasks.enqueue(mixed, "{\"type\": \"http\", \"maxAttempts\": 1, \"payload\": {\"method\": \"GET\", \"url\": \""
                + server.url(path) + "\"}}").get("id").longValue();
    }

    private static JsonNode post(ConfigurableApplicationContext replica, String uri, String body) {
        return client(replica).post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private static WebTestClient client(ConfigurableApplicationContext replica) {
        return Replicas.client(replica);
    }
}
