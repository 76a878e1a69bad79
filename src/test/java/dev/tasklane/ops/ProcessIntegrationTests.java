package dev.tasklane.ops;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.tasklane.testsupport.ServiceProcess;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The service as its own process, the way operators run it: SIGTERM drains it, and with
 * {@code LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs} every line it writes is one JSON object, the
 * lines about a task carry its id, queue and worker, and the API token never appears.
 */
final class ProcessIntegrationTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void sigtermDrainsTheServiceAndItsStructuredLogsCarryTaskContextButNeverTheToken() throws Exception {
        String queue = TaskFixtures.uniqueQueue("process");
        String token = "process-token-" + UUID.randomUUID();
        try (ServiceProcess service = ServiceProcess.start(Map.of(
                "TASKLANE_API_TOKENS", token,
                "TASKLANE_WORKER_QUEUES", queue + ":4",
                "TASKLANE_MAINTENANCE_ENABLED", "false",
                "TASKLANE_RETRY_BASE_DELAY", "100ms",
                "SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE", "6s",
                "LOGGING_STRUCTURED_FORMAT_CONSOLE", "ecs"), "-Xmx256m")) {
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
