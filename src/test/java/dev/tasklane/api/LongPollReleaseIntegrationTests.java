package dev.tasklane.api;

import java.net.Socket;
import java.time.Duration;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.RawHttp;
import dev.tasklane.testsupport.SlowClaims;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A claim, once sent, is delivered or released: whatever ends the wait while PostgreSQL is inside
 * the claim statement, its task goes back to queued at once, attempt not counted, with a
 * {@code queued} event that says why. Never a running task that nobody holds.
 */
final class LongPollReleaseIntegrationTests extends IntegrationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(15);

    @LocalServerPort
    private int port;

    @Test
    void aLongPollWhoseDeadlinePassesWhileItsClaimRunsAnswersEmptyAndItsTaskGoesBack() {
        String queue = TaskFixtures.uniqueQueue("poll-deadline");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(2500))) {
            long started = System.nanoTime();
            JsonNode answer = api().post().uri("/api/v1/queues/" + queue + "/claims").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w\", \"waitSeconds\": 1}").exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(answer.get("tasks")).isEmpty();
            // the deadline, plus the grace a running claim gets to return, not the claim's 2.5 s
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMillis(2400));
            assertReleased(id, "released: the long poll's deadline passed while its claim ran");
        }
    }

    @Test
    void aDebouncedTaskWhoseClaimNobodyReceivedIsStillWaiting() {
        String queue = TaskFixtures.uniqueQueue("poll-debounce");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"t\", \"payload\": 1, \"debounce\": {\"key\": \"k\", \"delaySeconds\": 0}}")
                .get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(2500))) {
            api().post().uri("/api/v1/queues/" + queue + "/claims").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w\", \"waitSeconds\": 1}").exchange().expectStatus().isOk();
            assertReleased(id, "released: the long poll's deadline passed while its claim ran");
        }
        JsonNode debounced = api().post().uri("/api/v1/queues/" + queue + "/tasks").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"payload\": 2, \"debounce\": {\"key\": \"k\", \"delaySeconds\": 0}}")
                .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(debounced.get("id").longValue()).isEqualTo(id);
        assertThat(debounced.get("payload").intValue()).isEqualTo(2);
    }

    @Test
    void aDebouncedTaskThatWasHandedBackHasStartedEvenIfItsNextClaimIsNeverReceived() {
        String queue = TaskFixtures.uniqueQueue("poll-handed-back");
        String body = "{\"type\": \"t\", \"payload\": 1, \"debounce\": {\"key\": \"k\", \"delaySeconds\": 0}}";
        long id = new Tasks(api()).enqueue(queue, body).get("id").longValue();
        JsonNode claimed = api().post().uri("/api/v1/queues/" + queue + "/claims").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\"}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks").get(0);
        api().post().uri("/api/v1/tasks/{id}/release", id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"leaseId\": \"" + claimed.get("leaseId").stringValue() + "\"}")
                .exchange().expectStatus().isOk();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(2500))) {
            api().post().uri("/api/v1/queues/" + queue + "/claims").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w\", \"waitSeconds\": 1}").exchange().expectStatus().isOk();
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> Sql.column(
                    "SELECT count(*) FROM task_event WHERE task_id = ? AND detail->>'error' LIKE '%deadline%'", id)
                    .get(0).equals("1"));
        }
        // it ran once: the next debounced enqueue makes a new task and leaves this one's payload alone
        assertThat(new Tasks(api()).enqueue(queue, body.replace("\"payload\": 1", "\"payload\": 2")).get("id").longValue())
                .isNotEqualTo(id);
        assertThat(new Tasks(api()).get(id).get("payload").intValue()).isEqualTo(1);
    }

    @Test
    void aLongPollWhoseClaimReturnsWithinItsGraceGetsItsTask() {
        String queue = TaskFixtures.uniqueQueue("poll-grace");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(1300))) {
            JsonNode answer = api().post().uri("/api/v1/queues/" + queue + "/claims").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w\", \"waitSeconds\": 1}").exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(answer.get("tasks")).hasSize(1);
            assertThat(answer.get("tasks").get(0).get("id").longValue()).isEqualTo(id);
        }
    }

    @Test
    void aLongPollWhoseClientHangsUpWhileItsClaimRunsReleasesItsTask() throws Exception {
        String queue = TaskFixtures.uniqueQueue("poll-hangup");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(1500))) {
            Socket client = RawHttp.post(port, "/api/v1/queues/" + queue + "/claims",
                    "{\"workerId\": \"w\", \"waitSeconds\": 10}");
            Thread.sleep(300); // the claim is inside PostgreSQL now
            client.close();
            assertReleased(id, "released: the claiming request was cancelled before its claim returned");
        }
    }

    @Test
    void aClaimWithoutWaitingWhoseClientHangsUpReleasesItsTask() throws Exception {
        String queue = TaskFixtures.uniqueQueue("claim-hangup");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        try (SlowClaims slow = SlowClaims.on(queue, Duration.ofMillis(1500))) {
            Socket client = RawHttp.post(port, "/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\"}");
            Thread.sleep(300);
            client.close();
            assertReleased(id, "released: the claiming request was cancelled before its claim returned");
        }
    }

    private static void assertReleased(long id, String error) {
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100)).until(() -> Sql.column(
                "SELECT state || ' ' || attempt FROM task WHERE id = ?", id).get(0).equals("queued 0")
                && Sql.column("SELECT count(*) FROM task_event WHERE task_id = ?", id).get(0).equals("3"));
        assertThat(Sql.column("SELECT name || ' ' || coalesce(detail->>'error', '') FROM task_event WHERE task_id = ?"
                + " ORDER BY id", id)).containsExactly("queued ", "running ", "queued " + error);
        assertThat(Sql.column("SELECT coalesce(worker_id, '') || coalesce(lease_id::text, '') FROM task WHERE id = ?", id))
                .containsExactly("");
    }
}
