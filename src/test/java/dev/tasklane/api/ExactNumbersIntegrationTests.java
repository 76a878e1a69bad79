package dev.tasklane.api;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.Map;

import dev.tasklane.support.ExactJson;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Numbers in payloads and results are kept as they were sent, as jsonb keeps them: not rounded
 * through a double, never turned into a string, and never so long written out that a few bytes
 * sent become megabytes stored and answered.
 */
final class ExactNumbersIntegrationTests extends IntegrationTest {

    private static final String NUMBERS = "{\"amount\": 12345678901234567.25, \"rate\": 0.10, \"huge\": 1e999,"
            + " \"tiny\": 1e-40, \"integer\": 123456789012345678901234567890, \"negative\": -0.5e3}";
    private static final Map<String, String> EXPECTED = Map.of(
            "amount", "12345678901234567.25", "rate", "0.10", "huge", "1" + "0".repeat(999),
            "tiny", "0." + "0".repeat(39) + "1", "integer", "123456789012345678901234567890", "negative", "-500");

    @Test
    void payloadNumbersAreAnsweredAndReadBackAsSent() {
        String queue = TaskFixtures.uniqueQueue("exact");
        JsonNode created = body(post("/api/v1/queues/" + queue + "/tasks",
                "{\"type\": \"noop-for-nobody\", \"payload\": " + NUMBERS + "}").expectStatus().isCreated());
        assertExact(created.get("payload"));
        assertExact(body(api().get().uri("/api/v1/tasks/" + created.get("id").longValue()).exchange()
                .expectStatus().isOk()).get("payload"));
        JsonNode batch = body(post("/api/v1/queues/" + queue + "/tasks/batch",
                "{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"payload\": [" + NUMBERS + "]}]}")
                .expectStatus().isCreated());
        assertExact(batch.get("tasks").get(1).get("payload").get(0));
    }

    @Test
    void aNumberWithMoreThanAThousandDigitsBeforeOrAfterThePointIs422() {
        String queue = TaskFixtures.uniqueQueue("long-number");
        for (String number : new String[] {"1e1000", "1e-1001", "0e2000", "-12.5e999", "1" + "0".repeat(990) + ".5e10"}) {
            post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\", \"payload\": {\"n\": " + number + "}}")
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.errors[0].field").isEqualTo("payload")
                    .jsonPath("$.errors[0].message").value(message -> assertThat((String) message).contains("1000 digits"));
        }
        post("/api/v1/queues/" + queue + "/tasks/batch",
                "{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"payload\": 1e5000}]}")
                .expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks[1].payload");
        api().get().uri("/api/v1/tasks?queue=" + queue).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.tasks").isEmpty();
        // the fields the service reads for itself refuse such numbers as out of range, not as a fault
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\", \"priority\": 1e999999999}")
                .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("priority");
    }

    @Test
    void aPayloadIsMeasuredWrittenOutSoThatShortExponentsCannotHideItsSize() {
        // 300 numbers of 1,000 digits: 2 KB sent, 300 KB stored and answered, over the 256 KiB limit
        String payload = "[" + String.join(",", Collections.nCopies(300, "1e999")) + "]";
        post("/api/v1/queues/" + TaskFixtures.uniqueQueue("wide") + "/tasks", "{\"type\": \"t\", \"payload\": " + payload + "}")
                .expectStatus().isEqualTo(413)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    @Test
    void aScheduleMakesTasksWithThePayloadNumbersAsSent() {
        String name = TaskFixtures.uniqueQueue("exact-schedule");
        String queue = TaskFixtures.uniqueQueue("exact-scheduled");
        JsonNode schedule = body(api().put().uri("/api/v1/schedules/" + name).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cron\": \"0 0 1 1 *\", \"queue\": \"" + queue + "\", \"paused\": true,"
                        + " \"task\": {\"type\": \"t\", \"payload\": " + NUMBERS + "}}")
                .exchange().expectStatus().isCreated());
        assertExact(schedule.get("task").get("payload"));
        JsonNode task = body(api().post().uri("/api/v1/schedules/" + name + "/trigger").exchange()
                .expectStatus().isCreated());
        assertExact(task.get("payload"));
        api().delete().uri("/api/v1/schedules/" + name).exchange().expectStatus().is2xxSuccessful();
    }

    @Test
    void aPullWorkersResultKeepsItsNumbersAndAnOverlongOneIs422() {
        String queue = TaskFixtures.uniqueQueue("exact-result");
        long first = enqueueAndClaim(queue);
        post("/api/v1/tasks/" + first + "/complete", "{\"workerId\": \"w\", \"result\": {\"n\": 1e1001}}")
                .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("result");
        JsonNode done = body(post("/api/v1/tasks/" + first + "/complete", "{\"workerId\": \"w\", \"result\": " + NUMBERS + "}")
                .expectStatus().isOk());
        assertExact(done.get("result"));
    }

    private long enqueueAndClaim(String queue) {
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\"}").expectStatus().isCreated();
        return body(post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\"}").expectStatus().isOk())
                .get("tasks").get(0).get("id").longValue();
    }

    /** Compares the numbers' text as sent back: what a client of any language reads. */
    private static void assertExact(JsonNode numbers) {
        EXPECTED.forEach((field, text) -> {
            JsonNode value = numbers.get(field);
            assertThat(value.isNumber()).as(field + " is a number: " + value).isTrue();
            assertThat(value.decimalValue()).as(field).isEqualByComparingTo(new BigDecimal(text));
        });
        assertThat(numbers.get("rate").decimalValue().scale()).as("0.10 keeps its scale").isEqualTo(2);
    }

    private WebTestClient.ResponseSpec post(String path, String body) {
        return api().post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private static JsonNode body(WebTestClient.ResponseSpec response) {
        return ExactJson.MAPPER.readTree(response.expectBody(String.class).returnResult().getResponseBody());
    }
}
