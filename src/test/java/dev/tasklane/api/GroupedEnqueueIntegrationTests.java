package dev.tasklane.api;

import java.time.Duration;
import java.util.List;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** Concurrent single enqueues share statements; each caller must still get exactly its own task. */
final class GroupedEnqueueIntegrationTests extends IntegrationTest {

    private static final int CALLERS = 90;

    @LocalServerPort
    private int port;

    @Test
    void concurrentSingleEnqueuesOnSeveralQueuesEachGetTheirOwnTask() {
        List<String> queues = List.of(TaskFixtures.uniqueQueue("group-a"), TaskFixtures.uniqueQueue("group-b"),
                TaskFixtures.uniqueQueue("group-c"));
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).build();
        JsonMapper json = JsonMapper.builder().build();

        List<JsonNode> created = Flux.range(0, CALLERS)
                .flatMap(i -> client.post().uri("/api/v1/queues/{queue}/tasks", queues.get(i % queues.size()))
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"type\": \"noop\", \"priority\": " + (i % 50) + ", \"payload\": {\"caller\": " + i + "}}")
                        .retrieve().toEntity(String.class)
                        .map(response -> {
                            assertThat(response.getStatusCode().value()).isEqualTo(201);
                            JsonNode task = json.readTree(response.getBody());
                            assertThat(response.getHeaders().getLocation())
                                    .hasToString("/api/v1/tasks/" + task.get("id").asString());
                            int caller = task.get("payload").get("caller").intValue();
                            assertThat(caller).isEqualTo(i);
                            assertThat(task.get("queue").asString()).isEqualTo(queues.get(i % queues.size()));
                            assertThat(task.get("priority").intValue()).isEqualTo(i % 50);
                            return task;
                        }), CALLERS)
                .collectList()
                .block(Duration.ofSeconds(60));

        assertThat(created.stream().map(task -> task.get("id").longValue()).distinct()).hasSize(CALLERS);
        for (String queue : queues) {
            JsonNode listed = api().get().uri("/api/v1/tasks?queue=" + queue + "&limit=500").exchange()
                    .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(listed.get("tasks").size()).isEqualTo(CALLERS / queues.size());
        }
    }
}
