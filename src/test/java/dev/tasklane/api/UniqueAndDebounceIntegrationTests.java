package dev.tasklane.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/** Unique tasks and debounced enqueues, checked at enqueue and serialized per (queue, key). */
final class UniqueAndDebounceIntegrationTests extends IntegrationTest {

    private static final int CALLERS = 50;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    private int port;

    private Tasks tasks;
    private String queue;

    @BeforeEach
    void setUp() {
        tasks = new Tasks(api());
        queue = TaskFixtures.uniqueQueue("uniq");
    }

    @Test
    void aWaitingUniqueTaskAnswersLaterEnqueuesUntilItStarts() {
        String body = "{\"type\": \"t\", \"unique\": {\"key\": \"report-7\", \"scope\": \"waiting\"}}";
        JsonNode first = tasks.enqueue(queue, body);
        assertThat(first.get("uniqueKey").stringValue()).isEqualTo("report-7");

        EntityExchangeResult<JsonNode> again = enqueue(body, 200);
        assertThat(again.getResponseHeaders().getFirst("Deduplicated")).isEqualTo("true");
        assertThat(again.getResponseBody().get("id").longValue()).isEqualTo(first.get("id").longValue());

        claim(1);
        assertThat(tasks.enqueue(queue, body).get("id").longValue()).isNotEqualTo(first.get("id").longValue());
    }

    @Test
    void anActiveUniqueTaskAnswersUntilItIsTerminal() {
        String body = "{\"type\": \"t\", \"unique\": {\"key\": \"sync\", \"scope\": \"active\"}}";
        long id = tasks.enqueue(queue, body).get("id").longValue();
        JsonNode claimed = claim(1).get(0);
        assertThat(enqueue(body, 200).getResponseBody().get("id").longValue()).isEqualTo(id);

        complete(claimed);
        assertThat(tasks.enqueue(queue, body).get("id").longValue()).isNotEqualTo(id);
    }

    @Test
    void aWindowedUniqueKeyIsFreeAgainOnceTheWindowHasPassed() {
        String body = "{\"type\": \"t\", \"unique\": {\"key\": \"w\", \"scope\": \"window\", \"windowSeconds\": 1}}";
        long id = tasks.enqueue(queue, body).get("id").longValue();
        complete(claim(1).get(0));
        assertThat(enqueue(body, 200).getResponseBody().get("id").longValue()).isEqualTo(id); // terminal, still in the window

        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200)).until(() ->
                api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(body).exchange().returnResult(String.class).getStatus().value() == 201);
    }

    @Test
    void withoutAKeyTheTypeAndPayloadAreTheKeyWhateverTheirSpacingAndKeyOrder() {
        long id = tasks.enqueue(queue, "{\"type\": \"t\", \"payload\": {\"a\": 1, \"b\": [1, 2]}, \"unique\": {\"scope\": \"waiting\"}}")
                .get("id").longValue();
        assertThat(enqueue("{\"type\":\"t\",\"payload\":{\"b\":[1,2],\"a\":1},\"unique\":{\"scope\":\"active\"}}", 200)
                .getResponseBody().get("id").longValue()).isEqualTo(id);
        tasks.enqueue(queue, "{\"type\": \"t\", \"payload\": {\"a\": 2, \"b\": [1, 2]}, \"unique\": {\"scope\": \"waiting\"}}");
        tasks.enqueue(queue, "{\"type\": \"u\", \"payload\": {\"a\": 1, \"b\": [1, 2]}, \"unique\": {\"scope\": \"waiting\"}}");
        tasks.enqueue(TaskFixtures.uniqueQueue("other"), "{\"type\": \"t\", \"payload\": {\"a\": 1, \"b\": [1, 2]}, \"unique\": {\"scope\": \"waiting\"}}");
    }

    @Test
    void theIdempotencyKeyIsCheckedBeforeTheUniqueKey() {
        long id = tasks.enqueue(queue, "{\"type\": \"t\", \"idempotencyKey\": \"i1\", \"unique\": {\"key\": \"k\", \"scope\": \"active\"}}")
                .get("id").longValue();
        EntityExchangeResult<JsonNode> replay = enqueue("{\"type\": \"t\", \"idempotencyKey\": \"i1\", \"unique\": {\"key\": \"k\", \"scope\": \"active\"}}", 200);
        assertThat(replay.getResponseHeaders().getFirst(TaskController.REPLAYED_HEADER)).isEqualTo("true");
        assertThat(replay.getResponseHeaders().getFirst("Deduplicated")).isNull();
        EntityExchangeResult<JsonNode> deduplicated = enqueue("{\"type\": \"t\", \"idempotencyKey\": \"i2\", \"unique\": {\"key\": \"k\", \"scope\": \"active\"}}", 200);
        assertThat(deduplicated.getResponseHeaders().getFirst("Deduplicated")).isEqualTo("true");
        assertThat(deduplicated.getResponseBody().get("id").longValue()).isEqualTo(id);
    }

    @Test
    void aBatchMarksTheItemsThatAnExistingTaskAnswered() {
        JsonNode batch = api().post().uri("/api/v1/queues/{q}/tasks/batch", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"tasks\": [{\"type\": \"t\", \"unique\": {\"key\": \"k\", \"scope\": \"waiting\"}}, {\"type\": \"plain\"},"
                        + " {\"type\": \"t\", \"unique\": {\"key\": \"k\", \"scope\": \"waiting\"}},"
                        + " {\"type\": \"d\", \"payload\": 1, \"debounce\": {\"key\": \"d\", \"delaySeconds\": 60}},"
                        + " {\"type\": \"d\", \"payload\": 2, \"debounce\": {\"key\": \"d\", \"delaySeconds\": 60}}]}")
                .exchange().expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
        assertThat(batch.get(0).has("deduplicated")).isFalse();
        assertThat(batch.get(2).get("deduplicated").booleanValue()).isTrue();
        assertThat(batch.get(2).get("id").longValue()).isEqualTo(batch.get(0).get("id").longValue());
        assertThat(batch.get(4).get("debounced").booleanValue()).isTrue();
        assertThat(batch.get(4).get("id").longValue()).isEqualTo(batch.get(3).get("id").longValue());
        assertThat(tasks.get(batch.get(3).get("id").longValue()).get("payload").intValue()).isEqualTo(2);
        assertThat(listed()).hasSize(3);
    }

    @Test
    void fiftyConcurrentUniqueEnqueuesMakeOneTaskAndAllGetIt() {
        List<ResponseEntity<String>> responses = concurrently(i ->
                "{\"type\": \"t\", \"payload\": {\"caller\": " + i + "}, \"unique\": {\"key\": \"once\", \"scope\": \"active\"}}");
        assertOneTaskForAll(responses, "Deduplicated");
    }

    @Test
    void fiftyConcurrentDebouncedEnqueuesMakeOneTaskWithOneOfTheirPayloads() {
        List<ResponseEntity<String>> responses = concurrently(i ->
                "{\"type\": \"t\", \"payload\": {\"caller\": " + i + "}, \"debounce\": {\"key\": \"once\", \"delaySeconds\": 60}}");
        long id = assertOneTaskForAll(responses, "Debounced");
        assertThat(tasks.get(id).get("payload").get("caller").intValue()).isBetween(0, CALLERS - 1);
    }

    @Test
    void aDebouncedEnqueueReplacesThePayloadAndMovesTheRunOfTheWaitingTask() {
        JsonNode first = tasks.enqueue(queue, "{\"type\": \"t\", \"payload\": {\"v\": 1}, \"debounce\": {\"key\": \"user-9\", \"delaySeconds\": 30}}");
        Instant firstRun = Tasks.time(first, "runAt");
        assertThat(Duration.between(Tasks.time(first, "createdAt"), firstRun).toSeconds()).isBetween(29L, 30L);

        EntityExchangeResult<JsonNode> second = enqueue("{\"type\": \"t\", \"payload\": {\"v\": 2}, \"debounce\": {\"key\": \"user-9\", \"delaySeconds\": 3000}}", 200);
        assertThat(second.getResponseHeaders().getFirst("Debounced")).isEqualTo("true");
        JsonNode moved = second.getResponseBody();
        assertThat(moved.get("id").longValue()).isEqualTo(first.get("id").longValue());
        assertThat(moved.get("payload").get("v").intValue()).isEqualTo(2);
        assertThat(Duration.between(firstRun, Tasks.time(moved, "runAt")).toSeconds()).isBetween(2960L, 2970L);

        List<SseClient.Event> events = SseClient.take(new SseClient(port)
                .events("/api/v1/tasks/" + first.get("id").longValue() + "/events", null), 2, Duration.ofSeconds(10));
        assertThat(events).extracting(SseClient.Event::event).containsExactly("queued", "queued");
        JsonNode debounced = JSON.readTree(events.get(1).data());
        assertThat(debounced.get("debounced").booleanValue()).isTrue();
        assertThat(debounced.get("runAt").stringValue()).isEqualTo(moved.get("runAt").stringValue());
    }

    @Test
    void aDebouncedRunNeverMovesPastItsFirstEnqueuePlusMaxDelay() {
        String body = "{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 60, \"maxDelaySeconds\": 90}}";
        JsonNode first = tasks.enqueue(queue, body);
        JsonNode moved = enqueue("{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 600, \"maxDelaySeconds\": 900}}", 200)
                .getResponseBody();
        assertThat(Duration.between(Tasks.time(first, "createdAt"), Tasks.time(moved, "runAt")).toMillis())
                .isCloseTo(90_000L, within(1_000L));
    }

    @Test
    void aDebounceKeyWhoseTaskHasStartedMakesANewTask() {
        String body = "{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 0}}";
        long id = tasks.enqueue(queue, body).get("id").longValue();
        claim(1);
        assertThat(tasks.enqueue(queue, body).get("id").longValue()).isNotEqualTo(id);
    }

    @Test
    void aDebouncedTaskThatRanAndSnoozedIsNotWaitingSoTheNextEnqueueMakesANewTask() {
        String body = "{\"type\": \"t\", \"payload\": {\"v\": 1}, \"debounce\": {\"key\": \"k\", \"delaySeconds\": 0}}";
        long id = tasks.enqueue(queue, body).get("id").longValue();
        JsonNode snoozed = snooze(claim(1).get(0), 3600);
        assertThat(snoozed.get("attempt").intValue()).isZero();

        JsonNode next = tasks.enqueue(queue, "{\"type\": \"t\", \"payload\": {\"v\": 2}, \"debounce\": {\"key\": \"k\", \"delaySeconds\": 5}}");
        assertThat(next.get("id").longValue()).isNotEqualTo(id);
        JsonNode untouched = tasks.get(id);
        assertThat(untouched.get("payload").get("v").intValue()).isEqualTo(1);
        assertThat(untouched.get("runAt").stringValue()).isEqualTo(snoozed.get("runAt").stringValue());
    }

    @Test
    void aUniqueWaitingTaskThatRanAndSnoozedNoLongerAnswersLaterEnqueues() {
        String body = "{\"type\": \"t\", \"unique\": {\"key\": \"u\", \"scope\": \"waiting\"}}";
        long id = tasks.enqueue(queue, body).get("id").longValue();
        snooze(claim(1).get(0), 3600);
        assertThat(tasks.enqueue(queue, body).get("id").longValue()).isNotEqualTo(id);
    }

    @Test
    void badUniqueAndDebounceOptionsAre422NamingTheField() {
        assertInvalid("{\"type\": \"t\", \"unique\": {\"scope\": \"forever\"}}", "unique.scope");
        assertInvalid("{\"type\": \"t\", \"unique\": {\"scope\": \"window\"}}", "unique.windowSeconds");
        assertInvalid("{\"type\": \"t\", \"unique\": {\"scope\": \"active\", \"windowSeconds\": 5}}", "unique.windowSeconds");
        assertInvalid("{\"type\": \"t\", \"unique\": {\"key\": \"\", \"scope\": \"active\"}}", "unique.key");
        assertInvalid("{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 60, \"maxDelaySeconds\": 30}}",
                "debounce.maxDelaySeconds");
        assertInvalid("{\"type\": \"t\", \"debounce\": {\"key\": \"k\"}}", "debounce.delaySeconds");
        assertInvalid("{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 1}, \"unique\": {\"scope\": \"active\"}}",
                "debounce");
        assertInvalid("{\"type\": \"t\", \"debounce\": {\"key\": \"k\", \"delaySeconds\": 1}, \"delaySeconds\": 5}", "debounce");
        api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"unique\": \"yes\"}").exchange().expectStatus().isBadRequest();
        assertThat(listed()).isEmpty();
    }

    private void assertInvalid(String body, String field) {
        JsonNode problem = api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isEqualTo(422)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(problem.get("errors").findValuesAsString("field")).as(body).contains(field);
    }

    private List<ResponseEntity<String>> concurrently(java.util.function.IntFunction<String> body) {
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).build();
        return Flux.range(0, CALLERS)
                .flatMap(i -> client.post().uri("/api/v1/queues/{queue}/tasks", queue)
                        .contentType(MediaType.APPLICATION_JSON).bodyValue(body.apply(i))
                        .retrieve().toEntity(String.class), CALLERS)
                .collectList()
                .block(Duration.ofSeconds(60));
    }

    private long assertOneTaskForAll(List<ResponseEntity<String>> responses, String header) {
        Map<Integer, Long> statuses = responses.stream()
                .collect(Collectors.groupingBy(r -> r.getStatusCode().value(), Collectors.counting()));
        assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(201, 1L, 200, (long) CALLERS - 1));
        assertThat(responses.stream().map(r -> JSON.readTree(r.getBody()).get("id").longValue()).distinct()).hasSize(1);
        assertThat(responses).filteredOn(r -> r.getStatusCode().value() == 200)
                .allSatisfy(r -> assertThat(r.getHeaders().getFirst(header)).isEqualTo("true"));
        List<JsonNode> listed = listed();
        assertThat(listed).hasSize(1);
        return listed.get(0).get("id").longValue();
    }

    private EntityExchangeResult<JsonNode> enqueue(String body, int status) {
        return api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult();
    }

    private JsonNode claim(int max) {
        JsonNode claimed = api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"max\": " + max + "}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
        assertThat(claimed).hasSize(max);
        return claimed;
    }

    private void complete(JsonNode claimed) {
        api().post().uri("/api/v1/tasks/{id}/complete", claimed.get("id").longValue()).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"leaseId\": \"" + claimed.get("leaseId").stringValue() + "\"}")
                .exchange().expectStatus().isOk();
    }

    private JsonNode snooze(JsonNode claimed, int delaySeconds) {
        return api().post().uri("/api/v1/tasks/{id}/snooze", claimed.get("id").longValue()).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"leaseId\": \"" + claimed.get("leaseId").stringValue()
                        + "\", \"delaySeconds\": " + delaySeconds + "}")
                .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private List<JsonNode> listed() {
        JsonNode page = api().get().uri("/api/v1/tasks?queue={q}", queue).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        List<JsonNode> all = new java.util.ArrayList<>();
        page.get("tasks").forEach(all::add);
        return all;
    }
}
