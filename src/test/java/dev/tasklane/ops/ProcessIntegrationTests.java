package dev.tasklane.ops;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.tasklane.testsupport.ServiceProcess;
import dev.tasklane.testsupport.SseSockets;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The service as its own process, the way operators run it, with {@code -Xmx512m}: stalled
 * event-stream subscribers cost it bounded memory whatever the results weigh; SIGTERM drains it;
 * and with {@code LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs} every line it writes is one JSON object,
 * the lines about a task carry its id, queue and worker, and the API token never appears. One
 * process serves both tests, the drain last.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class ProcessIntegrationTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int STALLED = 200;
    private static final int RESUMED = 20;
    private static final int HEAVY_TASKS = 40;

    private final String queue = TaskFixtures.uniqueQueue("process");
    private final String token = "process-token-" + UUID.randomUUID();
    private ServiceProcess service;

    @BeforeAll
    void start() throws Exception {
        service = ServiceProcess.start(Map.of(
                "TASKLANE_API_TOKENS", token,
                "TASKLANE_WORKER_QUEUES", queue + ":4",
                "TASKLANE_MAINTENANCE_ENABLED", "false",
                "TASKLANE_RETRY_BASE_DELAY", "100ms",
                "SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE", "6s",
                "LOGGING_STRUCTURED_FORMAT_CONSOLE", "ecs"), "-Xmx512m");
    }

    @AfterAll
    void stop() throws Exception {
        service.close();
    }

    @Test
    @Order(1)
    void twoHundredStalledSubscribersWhileResultsOf256KiBStreamCostBoundedMemoryAndLoseNothing() throws Exception {
        Api api = new Api(service.port(), token);
        String heavy = TaskFixtures.uniqueQueue("process-heavy"); // worked by the test, over the pull API
        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < STALLED; i++) {
                stalled.add(SseSockets.stalled(service.port(), "/api/v1/events?queue=" + heavy, token));
            }
            Thread.sleep(1000); // the streams are open and following the live events
            String result = "{\"blob\": \"" + "r".repeat(256 * 1024 - 20) + "\"}";
            for (int i = 0; i < HEAVY_TASKS; i++) {
                long id = api.enqueue(heavy, "{\"type\": \"heavy\"}");
                JsonNode claimed = api.post("/api/v1/queues/" + heavy + "/claims", "{\"workerId\": \"w\"}")
                        .get("tasks").get(0);
                assertThat(claimed.get("id").longValue()).isEqualTo(id);
                api.post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\", \"leaseId\": \""
                        + claimed.get("leaseId").stringValue() + "\", \"result\": " + result + "}");
            }
            // 200 subscribers that read nothing were offered 40 × 256 KiB each: 2 GB, had they kept it.
            assertThat(api.health()).isEqualTo(200);
            List<Long> expected = dev.tasklane.testsupport.Sql.column("SELECT e.id FROM task_event e"
                    + " WHERE e.queue = ? ORDER BY e.id", heavy).stream().map(Long::parseLong).toList();
            assertThat(expected).hasSize(HEAVY_TASKS * 3);
            for (int i = 0; i < RESUMED; i++) {
                List<Long> received = SseSockets.readEventIds(stalled.get(i), expected.get(expected.size() - 1),
                        Duration.ofSeconds(60));
                assertThat(received).as("stream %d, resumed", i).containsExactlyElementsOf(expected);
            }
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
    }

    @Test
    @Order(2)
    void sigtermDrainsTheServiceAndItsStructuredLogsCarryTaskContextButNeverTheToken() throws Exception {
        Api api = new Api(service.port(), token);

        long flaky = api.enqueue(queue, "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 10, \"failAttempts\": 1}}");
        long slow = api.enqueue(queue, "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 600000}}");
        await().atMost(Duration.ofSeconds(20)).until(() -> api.task(flaky).get("state").stringValue().equals("succeeded")
                && api.task(slow).get("state").stringValue().equals("running"));

        long signalled = System.nanoTime();
        assertThat(service.terminate(Duration.ofSeconds(30))).as("exited after SIGTERM").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - signalled)).isLessThan(Duration.ofSeconds(20));
        List<String> lines = service.lines();

        JsonNode released = new Api(0, token).taskFromDatabase(slow);
        assertThat(released.get("state").stringValue()).isEqualTo("queued");
        assertThat(released.get("last_error").stringValue()).isEqualTo("released on shutdown");

        List<JsonNode> records = lines.stream().filter(line -> !line.isBlank()).map(line -> {
            assertThat(line).as("one JSON object per line").startsWith("{").endsWith("}");
            return JSON.readTree(line);
        }).toList();
        assertThat(records).allSatisfy(record -> assertThat(record.has("@timestamp") && record.has("message")
                && !record.at("/log/level").isMissingNode() && record.has("ecs")).as(record.toString()).isTrue());
        assertThat(records).anySatisfy(record -> {
            assertThat(record.get("message").stringValue()).contains("Attempt 1 of task " + flaky + " failed");
            assertThat(field(record, "task", "id")).isEqualTo(Long.toString(flaky));
            assertThat(field(record, "task", "queue")).isEqualTo(queue);
            assertThat(field(record, "worker", "id")).isNotBlank();
        });
        assertThat(records).anySatisfy(record -> {
            assertThat(record.get("message").stringValue()).contains("Released task " + slow);
            assertThat(field(record, "task", "id")).isEqualTo(Long.toString(slow));
        });
        assertThat(String.join("\n", lines)).doesNotContain(token);
    }

    /** A field that ECS writes either nested ({@code task: {id}}) or flat ({@code "task.id"}). */
    private static String field(JsonNode record, String outer, String inner) {
        JsonNode nested = record.path(outer).path(inner);
        JsonNode value = nested.isMissingNode() ? record.path(outer + "." + inner) : nested;
        return value.isMissingNode() ? null : value.asString();
    }

    private record Api(int port, String token) {

        private static final HttpClient HTTP = HttpClient.newHttpClient();

        long enqueue(String queue, String body) throws Exception {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/api/v1/queues/" + queue + "/tasks"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
            return JSON.readTree(response.body()).get("id").longValue();
        }

        JsonNode post(String path, String body) throws Exception {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return JSON.readTree(response.body());
        }

        int health() throws Exception {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/liveness"))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        }

        JsonNode task(long id) throws Exception {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/api/v1/tasks/" + id))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(response.body());
        }

        JsonNode taskFromDatabase(long id) {
            List<String> row = dev.tasklane.testsupport.Sql.column(
                    "SELECT json_build_object('state', state, 'last_error', last_error)::text FROM task WHERE id = ?", id);
            return JSON.readTree(row.get(0));
        }
    }
}
