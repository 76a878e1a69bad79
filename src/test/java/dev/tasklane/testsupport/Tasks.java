package dev.tasklane.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.awaitility.Awaitility.await;

/** Calls of the task API that tests share, over a client that sends the test token. */
public record Tasks(WebTestClient api) {

    public JsonNode enqueue(String queue, String json) {
        return api.post().uri("/api/v1/queues/" + queue + "/tasks").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json).exchange().expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    /** Enqueues a batch ({@code {"tasks": [...]}}); returns the tasks' ids in request order. */
    public List<Long> enqueueBatch(String queue, String json) {
        JsonNode answer = api.post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json).exchange().expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        List<Long> ids = new ArrayList<>();
        answer.get("tasks").forEach(task -> ids.add(task.get("id").longValue()));
        return ids;
    }

    public JsonNode get(long id) {
        return api.get().uri("/api/v1/tasks/" + id).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    public JsonNode post(String uri, int status) {
        return api.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue("{}").exchange()
                .expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    /** Polls the task until it matches; fails after {@code patience}. */
    public JsonNode awaitTask(long id, Duration patience, Predicate<JsonNode> condition) {
        JsonNode[] last = new JsonNode[1];
        await().atMost(patience).pollInterval(Duration.ofMillis(50)).until(() -> {
            last[0] = get(id);
            return condition.test(last[0]);
        });
        return last[0];
    }

    public JsonNode awaitState(long id, String state, Duration patience) {
        return awaitTask(id, patience, task -> state.equals(task.get("state").stringValue()));
    }

    public static Instant time(JsonNode task, String field) {
        return Instant.parse(task.get(field).stringValue());
    }

    public static List<String> eventNames(List<String[]> events) {
        List<String> names = new ArrayList<>();
        events.forEach(e -> names.add(e[0]));
        return names;
    }
}
