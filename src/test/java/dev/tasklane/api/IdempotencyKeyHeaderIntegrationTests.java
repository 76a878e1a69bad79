package dev.tasklane.api;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/** The idempotency key as an {@code Idempotency-Key} header: what makes a retry of an unknown outcome safe. */
final class IdempotencyKeyHeaderIntegrationTests extends IntegrationTest {

    @Test
    void anEnqueueKeyedByTheHeaderIsAnsweredByItsFirstTaskWhenRetried() {
        String queue = TaskFixtures.uniqueQueue("key-header");
        JsonNode first = enqueue(queue, "order-1", "{\"type\": \"t\"}").expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(first.get("idempotencyKey").stringValue()).isEqualTo("order-1");
        JsonNode again = enqueue(queue, "order-1", "{\"type\": \"t\"}").expectStatus().isOk()
                .expectHeader().valueEquals(TaskController.REPLAYED_HEADER, "true")
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(again.get("id").longValue()).isEqualTo(first.get("id").longValue());
        // the same key in the body and the header is one key
        enqueue(queue, "order-1", "{\"type\": \"t\", \"idempotencyKey\": \"order-1\"}").expectStatus().isOk();
    }

    @Test
    void aHeaderThatDiffersFromTheBodysKeyOrIsEmptyIs422NamingIt() {
        String queue = TaskFixtures.uniqueQueue("key-header-bad");
        assertInvalid(enqueue(queue, "a", "{\"type\": \"t\", \"idempotencyKey\": \"b\"}"), "Idempotency-Key");
        assertInvalid(enqueue(queue, "", "{\"type\": \"t\"}"), "Idempotency-Key");
        assertInvalid(enqueue(queue, "k".repeat(201), "{\"type\": \"t\"}"), "Idempotency-Key");
    }

    @Test
    void aBatchKeyedByTheHeaderKeysEachItemByItsPositionSoThatItsRetryMakesNothingTwice() {
        String queue = TaskFixtures.uniqueQueue("key-header-batch");
        String body = "{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"idempotencyKey\": \"own\"}, {\"type\": \"t\"}]}";
        JsonNode created = batch(queue, "b1", body).expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
        assertThat(created.findValuesAsString("idempotencyKey")).containsExactly("b1:0", "own", "b1:2");
        JsonNode replayed = batch(queue, "b1", body).expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
        for (int i = 0; i < 3; i++) {
            assertThat(replayed.get(i).get("id").longValue()).isEqualTo(created.get(i).get("id").longValue());
        }
        assertInvalid(batch(queue, "b2", "{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"idempotencyKey\": \"b2:0\"}]}"),
                "tasks[1].idempotencyKey");
    }

    private WebTestClient.ResponseSpec enqueue(String queue, String key, String body) {
        return api().post().uri("/api/v1/queues/{q}/tasks", queue).header("Idempotency-Key", key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private WebTestClient.ResponseSpec batch(String queue, String key, String body) {
        return api().post().uri("/api/v1/queues/{q}/tasks/batch", queue).header("Idempotency-Key", key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private static void assertInvalid(WebTestClient.ResponseSpec response, String field) {
        JsonNode problem = response.expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(problem.get("errors").findValuesAsString("field")).contains(field);
    }
}
