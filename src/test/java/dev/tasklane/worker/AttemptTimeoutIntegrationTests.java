package dev.tasklane.worker;

import java.time.Duration;
import java.util.List;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code timeoutSeconds} bounds every attempt: in-process handlers are stopped at it, a pull
 * worker's lease never outlasts it, and the attempt fails as retryable, {@code timed out after Ns}.
 */
final class AttemptTimeoutIntegrationTests extends WorkerIntegrationTest {

    private Tasks tasks;

    @BeforeEach
    void client() {
        tasks = new Tasks(api());
    }

    @Test
    void aHandlerThatNeverCompletesIsTimedOutRetriedAndFinallyFailsSayingSo() {
        long id = tasks.enqueue("wk-timeout", "{\"type\": \"test.hang\", \"timeoutSeconds\": 1, \"maxAttempts\": 2}")
                .get("id").longValue();
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("attempt").intValue()).isEqualTo(2);
        assertThat(failed.get("lastError").stringValue()).isEqualTo("timed out after 1s");
        assertThat(failed.get("timeoutSeconds").intValue()).isEqualTo(1);
        assertThat(Sql.column("SELECT name || ' ' || coalesce(detail->>'error', '') FROM task_event WHERE task_id = ?"
                + " ORDER BY id", id)).containsExactly("queued ", "running ", "queued timed out after 1s", "running ",
                "failed timed out after 1s");
        // each attempt ran about a second: from its running event to the event that ended it
        List<String> runSeconds = Sql.column("SELECT extract(epoch FROM lead(at) OVER (ORDER BY id) - at)::text"
                + " FROM task_event WHERE task_id = ? ORDER BY id", id);
        for (int running : new int[] {1, 3}) {
            assertThat(Double.parseDouble(runSeconds.get(running))).isBetween(0.9, 2.5);
        }
    }

    @Test
    void aHandlerThatIgnoresCancellationIsTimedOutAndItsLateResultChangesNothing() throws InterruptedException {
        long id = tasks.enqueue("wk-timeout", "{\"type\": \"test.stubborn\", \"timeoutSeconds\": 1, \"maxAttempts\": 1,"
                + " \"payload\": {\"ms\": 2500}}").get("id").longValue();
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("lastError").stringValue()).isEqualTo("timed out after 1s");
        Thread.sleep(2000); // the handler's own result arrives meanwhile; nothing may come of it
        JsonNode later = tasks.get(id);
        assertThat(later.get("state").stringValue()).isEqualTo("failed");
        assertThat(later.get("result").isNull()).isTrue();
        assertThat(Sql.column("SELECT name FROM task_event WHERE task_id = ? ORDER BY id", id))
                .containsExactly("queued", "running", "failed");
    }

    @Test
    void aPullWorkersLeaseNeverOutlastsTheTimeoutAndItsHeartbeatAfterItIs409() throws InterruptedException {
        String queue = TaskFixtures.uniqueQueue("pull-timeout");
        long id = tasks.enqueue(queue, "{\"type\": \"t\", \"timeoutSeconds\": 1, \"maxAttempts\": 1}").get("id").longValue();
        JsonNode claimed = post("/api/v1/queues/" + queue + "/claims",
                "{\"workerId\": \"w\", \"leaseSeconds\": 600}", 200).get("tasks").get(0);
        assertThat(claimed.get("timeoutAt").stringValue()).isEqualTo(claimed.get("leaseExpiresAt").stringValue());
        assertThat(Duration.between(Tasks.time(claimed, "startedAt"), Tasks.time(claimed, "timeoutAt")))
                .isEqualTo(Duration.ofSeconds(1));
        JsonNode beat = post("/api/v1/tasks/" + id + "/heartbeat", "{\"workerId\": \"w\", \"leaseSeconds\": 600}", 200);
        assertThat(beat.get("leaseExpiresAt").stringValue()).isEqualTo(claimed.get("timeoutAt").stringValue());

        Thread.sleep(1200); // past the timeout: that is the point
        post("/api/v1/tasks/" + id + "/heartbeat", "{\"workerId\": \"w\"}", 409);
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("lastError").stringValue()).isEqualTo("timed out after 1s");
    }

    @Test
    void withoutTimeoutSecondsATaskStoresTheReplicasDefaultOfTwoHours() {
        String queue = TaskFixtures.uniqueQueue("default-timeout");
        JsonNode task = tasks.enqueue(queue, "{\"type\": \"t\"}");
        assertThat(task.get("timeoutSeconds").intValue()).isEqualTo(7200);
        assertThat(task.get("timeoutAt").isNull()).isTrue();
        assertThat(task.has("leaseId")).isFalse();
    }

    @Test
    void aTimeoutOutsideOneSecondToSevenDaysIs422AlsoInABatch() {
        String queue = TaskFixtures.uniqueQueue("bad-timeout");
        for (String value : List.of("0", "604801", "1.5", "-1")) {
            api().post().uri("/api/v1/queues/" + queue + "/tasks").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"t\", \"timeoutSeconds\": " + value + "}").exchange()
                    .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("timeoutSeconds");
        }
        api().post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"timeoutSeconds\": 0}]}").exchange()
                .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks[1].timeoutSeconds");
        api().post().uri("/api/v1/queues/" + queue + "/tasks").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"timeoutSeconds\": \"60\"}").exchange().expectStatus().isEqualTo(400);
        JsonNode week = tasks.enqueue(queue, "{\"type\": \"t\", \"timeoutSeconds\": 604800}");
        assertThat(week.get("timeoutSeconds").intValue()).isEqualTo(604800);
    }

    private JsonNode post(String uri, String json, int status) {
        return api().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange()
                .expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult().getResponseBody();
    }
}
