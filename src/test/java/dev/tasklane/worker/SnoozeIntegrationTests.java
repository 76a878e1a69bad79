package dev.tasklane.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** A task asks to run later without spending an attempt: from a handler, or from a pull worker. */
final class SnoozeIntegrationTests extends WorkerIntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    private int port;
    private Tasks tasks;
    private String queue;

    @BeforeEach
    void setUp() {
        tasks = new Tasks(api());
        queue = TaskFixtures.uniqueQueue("snooze");
    }

    @Test
    void aHandlerThatSnoozesRunsAgainLaterWithItsAttemptNotCounted() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"test.snooze\", \"payload\": {\"ms\": 300}}").get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(1);
        assertThat(done.get("snoozes").intValue()).isEqualTo(1);
        List<SseClient.Event> events = SseClient.take(new SseClient(port).events("/api/v1/tasks/" + id + "/events", null),
                5, Duration.ofSeconds(10));
        assertThat(events.stream().map(SseClient.Event::event).toList())
                .containsExactly("queued", "running", "queued", "running", "succeeded");
        JsonNode snoozed = JSON.readTree(events.get(2).data());
        assertThat(snoozed.get("snoozed").booleanValue()).isTrue();
        assertThat(snoozed.get("attempt").intValue()).isZero();
        assertThat(Duration.between(Instant.parse(JSON.readTree(events.get(1).data()).get("at").stringValue()),
                Instant.parse(snoozed.get("runAt").stringValue()))).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        String scrape = anonymous().get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(scrape.lines().filter(line -> line.startsWith("tasklane_tasks_snoozed_total{")
                && line.contains("queue=\"wk-basic\"") && line.contains("type=\"test.snooze\""))).hasSize(1);
        assertThat(scrape.lines().filter(line -> line.startsWith("tasklane_tasks_retried_total{")
                && line.contains("type=\"test.snooze\""))).isEmpty(); // a snooze is no retry
    }

    @Test
    void aPullWorkerSnoozesAndPastMaxSnoozesTheAttemptFailsAsRetryable() {
        long later = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        JsonNode claimed = claim().get(0);
        JsonNode snoozed = snooze(later, claimed.get("leaseId").stringValue(), 3600, 200);
        assertThat(snoozed.get("state").stringValue()).isEqualTo("queued");
        assertThat(snoozed.get("attempt").intValue()).isZero();
        assertThat(snoozed.get("snoozes").intValue()).isEqualTo(1);
        assertThat(Duration.between(Instant.now(), Tasks.time(snoozed, "runAt")))
                .isBetween(Duration.ofSeconds(3590), Duration.ofSeconds(3601));
        snooze(later, claimed.get("leaseId").stringValue(), 0, 409); // that lease is over
        assertThat(claim()).isEmpty(); // not due for an hour

        long often = tasks.enqueue(queue, "{\"type\": \"t\", \"maxSnoozes\": 1}").get("id").longValue();
        JsonNode first = snooze(often, claim().get(0).get("leaseId").stringValue(), 0, 200);
        assertThat(first.get("snoozes").intValue()).isEqualTo(1);
        assertThat(first.get("maxSnoozes").intValue()).isEqualTo(1);
        JsonNode second = claim().get(0);
        assertThat(second.get("attempt").intValue()).isEqualTo(1);
        JsonNode failed = snooze(often, second.get("leaseId").stringValue(), 0, 200);
        assertThat(failed.get("state").stringValue()).isEqualTo("queued"); // retried, attempts remain
        assertThat(failed.get("attempt").intValue()).isEqualTo(1); // this attempt counted
        assertThat(failed.get("lastError").stringValue()).isEqualTo("snoozed too often");
        assertThat(failed.get("snoozes").intValue()).isEqualTo(1);
    }

    @Test
    void aRetriedTaskSnoozesAfreshWhetherRetriedAloneOrInBulk() {
        long alone = snoozedTooOften();
        long inBulk = snoozedTooOften();

        JsonNode retried = retry("/api/v1/tasks/" + alone + "/retry", "");
        assertThat(retried.get("snoozes").intValue()).isZero();
        assertThat(retry("/api/v1/tasks/retry", "{\"ids\": [" + inBulk + "]}").toString())
                .isEqualTo("{\"count\":1,\"skipped\":0}");
        assertThat(tasks.get(inBulk).get("snoozes").intValue()).isZero();

        for (JsonNode claimed : claim(2)) {
            JsonNode snoozed = snooze(claimed.get("id").longValue(), claimed.get("leaseId").stringValue(), 0, 200);
            assertThat(snoozed.get("state").stringValue()).isEqualTo("queued"); // not "snoozed too often" again
            assertThat(snoozed.get("snoozes").intValue()).isEqualTo(1);
        }
    }

    @Test
    void aSnoozeNeedsADelayWithinAYear() {
        long id = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        String lease = claim().get(0).get("leaseId").stringValue();
        post(id, "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\"}", 422);
        post(id, "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\", \"delaySeconds\": -1}", 422);
        post(id, "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\", \"delaySeconds\": 31536001}", 422);
        post(id, "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\", \"delaySeconds\": \"5\"}", 400);
        api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"maxSnoozes\": 10001}").exchange().expectStatus().isEqualTo(422);
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("running");
    }

    private JsonNode claim() {
        return claim(1);
    }

    private JsonNode claim(int max) {
        return api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"max\": " + max + "}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
    }

    /** A task that used its one snooze and then failed its one attempt with "snoozed too often". */
    private long snoozedTooOften() {
        long id = tasks.enqueue(queue, "{\"type\": \"t\", \"maxSnoozes\": 1, \"maxAttempts\": 1}").get("id").longValue();
        snooze(id, claim().get(0).get("leaseId").stringValue(), 0, 200);
        JsonNode failed = snooze(id, claim().get(0).get("leaseId").stringValue(), 0, 200);
        assertThat(failed.get("state").stringValue()).isEqualTo("failed");
        assertThat(failed.get("lastError").stringValue()).isEqualTo("snoozed too often");
        return id;
    }

    private JsonNode retry(String uri, String body) {
        return api().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private JsonNode snooze(long id, String leaseId, long delaySeconds, int status) {
        return post(id, "{\"workerId\": \"w\", \"leaseId\": \"" + leaseId + "\", \"delaySeconds\": " + delaySeconds + "}",
                status);
    }

    private JsonNode post(long id, String body, int status) {
        return api().post().uri("/api/v1/tasks/{id}/snooze", id).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult().getResponseBody();
    }
}
