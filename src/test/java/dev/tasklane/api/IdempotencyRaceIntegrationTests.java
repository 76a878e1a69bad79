package dev.tasklane.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.RepeatedTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

final class IdempotencyRaceIntegrationTests extends IntegrationTest {

    private static final int CALLERS = 50;

    @LocalServerPort
    private int port;

    @RepeatedTest(3)
    void fiftyConcurrentEnqueuesWithOneKeyMakeOneTaskAndAllGetIt() {
        String queue = TaskFixtures.uniqueQueue("race");
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).build();
        List<ResponseEntity<String>> responses = Flux.range(0, CALLERS)
                .flatMap(i -> client.post().uri("/api/v1/queues/{queue}/tasks", queue)
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"type\": \"noop\", \"payload\": {\"caller\": " + i + "}, \"idempotencyKey\": \"once\"}")
                        .retrieve().toEntity(String.class), CALLERS)
                .collectList()
                .block(Duration.ofSeconds(60));

        Map<Integer, Long> statuses = responses.stream()
                .collect(Collectors.groupingBy(r -> r.getStatusCode().value(), Collectors.counting()));
        assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(201, 1L, 200, (long) CALLERS - 1));
        JsonMapper json = JsonMapper.builder().build();
        assertThat(responses.stream().map(r -> json.readTree(r.getBody()).get("id").longValue()).distinct())
                .hasSize(1);
        assertThat(responses).filteredOn(r -> r.getStatusCode().value() == 200)
                .allSatisfy(r -> assertThat(r.getHeaders().getFirst(TaskController.REPLAYED_HEADER)).isEqualTo("true"));

        JsonNode listed = api().get().uri("/api/v1/tasks?queue=" + queue).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(listed.get("tasks").size()).isEqualTo(1);
    }
}
