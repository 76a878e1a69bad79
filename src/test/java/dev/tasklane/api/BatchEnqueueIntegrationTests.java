package dev.tasklane.api;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

final class BatchEnqueueIntegrationTests extends IntegrationTest {

    @Test
    void batchAnswers201WithTheTasksInRequestOrder() {
        String queue = TaskFixtures.uniqueQueue("batch");
        JsonNode body = post(queue, "{\"tasks\": [{\"type\": \"a\"}, {\"type\": \"b\", \"priority\": 3},"
                + " {\"type\": \"c\", \"payload\": [1]}]}")
                .expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(types(body)).containsExactly("a", "b", "c");
        assertThat(body.get("tasks").get(1).get("priority").intValue()).isEqualTo(3);
        assertThat(body.get("tasks").get(2).get("payload").get(0).intValue()).isEqualTo(1);
    }

    @Test
    void aBatchOf1000FitsAndKeepsItsOrderWithEveryQueuedEvent() throws SQLException {
        String queue = TaskFixtures.uniqueQueue("batch-1000");
        String items = IntStream.range(0, 1000)
                .mapToObj(i -> "{\"type\": \"t" + i + "\", \"idempotencyKey\": \"key-" + (999 - i) + "\"}")
                .collect(Collectors.joining(","));
        JsonNode body = post(queue, "{\"tasks\": [" + items + "]}")
                .expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody();
        List<String> types = types(body);
        assertThat(types).hasSize(1000);
        for (int i = 0; i < 1000; i++) {
            assertThat(types.get(i)).isEqualTo("t" + i);
            assertThat(body.get("tasks").get(i).get("idempotencyKey").stringValue()).isEqualTo("key-" + (999 - i));
        }
        long firstId = body.get("tasks").get(0).get("id").longValue();
        assertThat(TaskApiIntegrationTests.query(
                "SELECT count(*)::text FROM task_event e JOIN task t ON t.id = e.task_id"
                        + " WHERE t.queue = (SELECT queue FROM task WHERE id = ?) AND e.name = 'queued'", firstId))
                .containsExactly("1000");
    }

    @Test
    void anInvalidItemRejectsTheWholeBatchNamingTheItem() {
        String queue = TaskFixtures.uniqueQueue("batch-invalid");
        post(queue, "{\"tasks\": [{\"type\": \"ok\"}, {\"type\": \"ok\"}, {\"type\": \"ok\"}, {\"priority\": 1},"
                + " {\"type\": \"ok\", \"maxAttempts\": 0}]}")
                .expectStatus().isEqualTo(422)
                .expectBody()
                .jsonPath("$.errors[0].field").isEqualTo("tasks[3].type")
                .jsonPath("$.errors[1].field").isEqualTo("tasks[4].maxAttempts");
        assertThat(listTypes(queue)).isEmpty();
    }

    @Test
    void anItemOfTheWrongJsonTypeIs400AndCreatesNothing() {
        String queue = TaskFixtures.uniqueQueue("batch-type");
        post(queue, "{\"tasks\": [{\"type\": \"ok\"}, 7]}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks[1]");
        post(queue, "{\"tasks\": {\"type\": \"ok\"}}").expectStatus().isBadRequest().expectBody();
        assertThat(listTypes(queue)).isEmpty();
    }

    @Test
    void aKeyRepeatedInsideOneBatchIsInvalid() {
        String queue = TaskFixtures.uniqueQueue("batch-dup");
        post(queue, "{\"tasks\": [{\"type\": \"a\", \"idempotencyKey\": \"k\"}, {\"type\": \"b\", \"idempotencyKey\": \"k\"}]}")
                .expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks[1].idempotencyKey");
        assertThat(listTypes(queue)).isEmpty();
    }

    @Test
    void aBatchOfOnlyReplaysAnswers200AndAMixedOne201() {
        String queue = TaskFixtures.uniqueQueue("batch-replay");
        JsonNode first = post(queue, "{\"tasks\": [{\"type\": \"a\", \"idempotencyKey\": \"1\"}, {\"type\": \"b\", \"idempotencyKey\": \"2\"}]}")
                .expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody();
        JsonNode replay = post(queue, "{\"tasks\": [{\"type\": \"x\", \"idempotencyKey\": \"2\"}, {\"type\": \"y\", \"idempotencyKey\": \"1\"}]}")
                .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(replay.get("tasks").get(0).get("id")).isEqualTo(first.get("tasks").get(1).get("id"));
        assertThat(replay.get("tasks").get(1).get("id")).isEqualTo(first.get("tasks").get(0).get("id"));
        JsonNode mixed = post(queue, "{\"tasks\": [{\"type\": \"c\"}, {\"type\": \"z\", \"idempotencyKey\": \"1\"}]}")
                .expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(types(mixed)).containsExactly("c", "a");
    }

    @Test
    void emptyAndOversizedBatchesAre422() {
        String queue = TaskFixtures.uniqueQueue("batch-size");
        post(queue, "{\"tasks\": []}").expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks");
        post(queue, "{}").expectStatus().isEqualTo(422).expectBody();
        String items = String.join(",", java.util.Collections.nCopies(1001, "{\"type\": \"a\"}"));
        post(queue, "{\"tasks\": [" + items + "]}").expectStatus().isEqualTo(422).expectBody();
        assertThat(listTypes(queue)).isEmpty();
    }

    private WebTestClient.ResponseSpec post(String queue, String json) {
        return api().post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json).exchange();
    }

    private List<String> listTypes(String queue) {
        return types(api().get().uri("/api/v1/tasks?queue=" + queue).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody());
    }

    private static List<String> types(JsonNode body) {
        List<String> types = new ArrayList<>();
        body.get("tasks").forEach(task -> types.add(task.get("type").stringValue()));
        return types;
    }
}
