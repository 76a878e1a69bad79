package dev.tasklane.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

final class WorkerPipelineIntegrationTests extends WorkerIntegrationTest {

    private Tasks tasks;

    @BeforeEach
    void client() {
        tasks = new Tasks(api());
    }

    @Test
    void aNoopTaskSucceedsOnItsFirstAttemptWithItsEventsInOrder() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(1);
        assertThat(done.get("result").isNull()).isTrue();
        assertThat(done.get("workerId").isNull()).isTrue();
        assertThat(done.get("finishedAt").isNull()).isFalse();
        assertThat(events(id)).containsExactly("queued", "running", "succeeded");
    }

    @Test
    void aSleepTaskReportsProgressAfterEachStepAndReturnsItsResult() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 300, \"steps\": 3}}")
                .get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("result").get("sleptMs").intValue()).isEqualTo(300);
        assertThat(done.get("progress").get("percent").intValue()).isEqualTo(100);
        assertThat(done.get("progress").get("message").stringValue()).isEqualTo("step 3/3");
        assertThat(Sql.column("SELECT detail->>'percent' FROM task_event WHERE task_id = ? AND name = 'progress' ORDER BY id", id))
                .containsExactly("33", "67", "100");
        assertThat(events(id)).containsExactly("queued", "running", "progress", "progress", "progress", "succeeded");
    }

    @Test
    void aSleepPayloadTakesWholeNumbersWrittenWithAFractionAndRefusesOthers() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 100.0, \"steps\": 2.00,"
                + " \"failAttempts\": 0e3}}").get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("result").get("sleptMs").longValue()).isEqualTo(100);
        assertThat(done.get("progress").get("message").stringValue()).isEqualTo("step 2/2");
        for (String payload : List.of("{\"durationMs\": 100.5}", "{\"steps\": 1e3000}", "{\"durationMs\": \"100\"}")) {
            api().post().uri("/api/v1/queues/wk-basic/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"sleep\", \"payload\": " + payload + "}").exchange()
                    .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("payload");
        }
    }

    @Test
    void aFailingAttemptIsRetriedWithBackoffUntilItSucceeds() {
        long id = tasks.enqueue("wk-retry", "{\"type\": \"sleep\", \"payload\": {\"failAttempts\": 2}}").get("id").longValue();
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(3);
        assertThat(done.get("lastError").stringValue()).isEqualTo("simulated failure");
        assertThat(transitions(id)).containsExactly("queued", "running", "queued", "running", "queued", "running", "succeeded");
        // base 200 ms: the second attempt waits 100..200 ms, the third 200..400 ms
        List<Instant> starts = eventTimes(id, "running");
        List<Instant> requeues = eventTimes(id, "queued").subList(1, 3);
        assertThat(Duration.between(requeues.get(0), starts.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(90));
        assertThat(Duration.between(requeues.get(1), starts.get(2))).isGreaterThanOrEqualTo(Duration.ofMillis(190));
        List<String> runAts = Sql.column("SELECT detail->>'runAt' FROM task_event WHERE task_id = ? AND name = 'queued'"
                + " ORDER BY id", id);
        assertThat(runAts).hasSize(3);
    }

    @Test
    void aTaskFailsOnceItsAttemptsAreUsedUp() {
        long id = tasks.enqueue("wk-retry", "{\"type\": \"sleep\", \"maxAttempts\": 2, \"payload\": {\"failAttempts\": 9}}")
                .get("id").longValue();
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("attempt").intValue()).isEqualTo(2);
        assertThat(failed.get("lastError").stringValue()).isEqualTo("simulated failure");
        assertThat(failed.get("finishedAt").isNull()).isFalse();
        assertThat(transitions(id)).containsExactly("queued", "running", "queued", "running", "failed");
        assertThat(Sql.column("SELECT detail->>'error' FROM task_event WHERE task_id = ? AND name = 'failed'", id))
                .containsExactly("simulated failure");
    }

    @Test
    void tasksRunByPriorityThenRunAtThenId() {
        tasks.post("/api/v1/queues/wk-order/pause", 200);
        Instant past = Instant.now().minusSeconds(60);
        long low = enqueueOrder("{\"type\": \"noop\", \"priority\": -5}");
        long laterRunAt = enqueueOrder("{\"type\": \"noop\", \"runAt\": \"" + past.plusSeconds(10) + "\"}");
        long earlierRunAt = enqueueOrder("{\"type\": \"noop\", \"runAt\": \"" + past + "\"}");
        long high = enqueueOrder("{\"type\": \"noop\", \"priority\": 50}");
        long sameAsEarlier = enqueueOrder("{\"type\": \"noop\", \"runAt\": \"" + past + "\"}");
        long delayed = enqueueOrder("{\"type\": \"noop\", \"priority\": 100, \"delaySeconds\": 1.5}");
        tasks.post("/api/v1/queues/wk-order/resume", 200);
        for (long id : List.of(low, laterRunAt, earlierRunAt, high, sameAsEarlier, delayed)) {
            tasks.awaitState(id, "succeeded", PATIENCE);
        }
        List<String> order = Sql.column("SELECT id::text FROM task WHERE id = ANY(?) ORDER BY started_at",
                (Object) new Long[] {low, laterRunAt, earlierRunAt, high, sameAsEarlier, delayed});
        assertThat(order).containsExactly(String.valueOf(high), String.valueOf(earlierRunAt),
                String.valueOf(sameAsEarlier), String.valueOf(laterRunAt), String.valueOf(low), String.valueOf(delayed));
        JsonNode delayedTask = tasks.get(delayed);
        assertThat(Tasks.time(delayedTask, "startedAt")).isAfterOrEqualTo(Tasks.time(delayedTask, "runAt"));
    }

    @Test
    void aPausedQueueIsNotClaimedFromUntilResumed() throws InterruptedException {
        JsonNode paused = tasks.post("/api/v1/queues/wk-pause/pause", 200);
        assertThat(paused.get("paused").booleanValue()).isTrue();
        assertThat(paused.get("workedInProcess").booleanValue()).isTrue();
        long id = tasks.enqueue("wk-pause", "{\"type\": \"noop\"}").get("id").longValue();
        Thread.sleep(1000); // a claim would take well under this; nothing to wait for but time
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("queued");
        JsonNode resumed = tasks.post("/api/v1/queues/wk-pause/resume", 200);
        assertThat(resumed.get("paused").booleanValue()).isFalse();
        tasks.awaitState(id, "succeeded", PATIENCE);
    }

    @Test
    void cancellingAQueuedTaskMakesItCancelledWithItsEvent() {
        tasks.post("/api/v1/queues/wk-cancel/pause", 200);
        long id = tasks.enqueue("wk-cancel", "{\"type\": \"noop\"}").get("id").longValue();
        JsonNode cancelled = tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        assertThat(cancelled.get("state").stringValue()).isEqualTo("cancelled");
        assertThat(cancelled.get("finishedAt").isNull()).isFalse();
        tasks.post("/api/v1/queues/wk-cancel/resume", 200);
        assertThat(events(id)).containsExactly("queued", "cancelled");
        assertThat(tasks.post("/api/v1/tasks/" + id + "/cancel", 409).get("state").stringValue()).isEqualTo("cancelled");
    }

    @Test
    void cancellingARunningTaskStopsItsHandler() throws InterruptedException {
        long id = tasks.enqueue("wk-cancel", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 20000, \"steps\": 100}}")
                .get("id").longValue();
        tasks.awaitTask(id, PATIENCE, t -> t.get("progress").get("percent").isNumber());
        assertThat(tasks.post("/api/v1/tasks/" + id + "/cancel", 200).get("state").stringValue()).isEqualTo("cancelled");
        int progressAtCancel = Sql.column("SELECT count(*) FROM task_event WHERE task_id = ? AND name = 'progress'", id)
                .stream().mapToInt(Integer::parseInt).sum();
        Thread.sleep(1000); // five more steps if the handler still ran
        assertThat(Sql.column("SELECT count(*)::int FROM task_event WHERE task_id = ? AND name = 'progress'", id))
                .containsExactly(String.valueOf(progressAtCancel));
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("cancelled");
        assertThat(events(id)).endsWith("cancelled");
    }

    @Test
    void retryingAFailedTaskRunsItAgainFromAttemptZero() {
        long id = tasks.enqueue("wk-retry", "{\"type\": \"sleep\", \"maxAttempts\": 1, \"payload\": {\"failAttempts\": 1}}")
                .get("id").longValue();
        tasks.awaitState(id, "failed", PATIENCE);
        JsonNode retried = tasks.post("/api/v1/tasks/" + id + "/retry", 200);
        assertThat(retried.get("attempt").intValue()).isZero();
        assertThat(retried.get("finishedAt").isNull()).isTrue();
        // attempt counts from zero again: with failAttempts 1 and maxAttempts 1 it fails again
        tasks.awaitTask(id, PATIENCE, t -> "failed".equals(t.get("state").stringValue()) && t.get("attempt").intValue() == 1
                && transitions(id).size() == 6);
        assertThat(transitions(id)).containsExactly("queued", "running", "failed", "queued", "running", "failed");
    }

    @Test
    void retryAndCancelRefuseStatesThatDoNotAllowThem() {
        tasks.post("/api/v1/queues/wk-cancel/pause", 200);
        long id = tasks.enqueue("wk-cancel", "{\"type\": \"noop\"}").get("id").longValue();
        assertThat(tasks.post("/api/v1/tasks/" + id + "/retry", 409).get("state").stringValue()).isEqualTo("queued");
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        tasks.post("/api/v1/queues/wk-cancel/resume", 200);
        tasks.post("/api/v1/tasks/987654321/cancel", 404);
        tasks.post("/api/v1/tasks/987654321/retry", 404);
    }

    @Test
    void cancellingAndRetryingARunningTaskLeavesItsNewAttemptCancellableAndRenewed() {
        long id = tasks.enqueue("wk-cancel", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 4000, \"steps\": 40}}")
                .get("id").longValue();
        tasks.awaitTask(id, PATIENCE, t -> t.get("progress").get("percent").isNumber());
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        tasks.post("/api/v1/tasks/" + id + "/retry", 200);
        // The same replica claims it again, as attempt 1 again: only the lease tells the two runs apart.
        tasks.awaitTask(id, PATIENCE, t -> "running".equals(t.get("state").stringValue())
                && t.get("progress").get("percent").isNumber());
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        long progressAtCancel = progressEvents(id);
        org.awaitility.Awaitility.await().during(Duration.ofMillis(500)).atMost(PATIENCE)
                .until(() -> progressEvents(id) == progressAtCancel);
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("cancelled");

        tasks.post("/api/v1/tasks/" + id + "/retry", 200);
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(1); // renewed past its 2 s lease, never rescued
        assertThat(transitions(id)).containsExactly("queued", "running", "cancelled", "queued", "running", "cancelled",
                "queued", "running", "succeeded");
    }

    @Test
    void aDelayedTaskOnAnIdleQueueStartsAtItsRunAtNotAtThePoll() {
        // Inserted behind the service's back: no wake-up announces it, only the database knows.
        long hidden = Long.parseLong(Sql.column("INSERT INTO task (queue, type, run_at) VALUES ('wk-due', 'noop',"
                + " now() + interval '1500 milliseconds') RETURNING id").get(0));
        TaskRows.follow(hidden);
        long now = tasks.enqueue("wk-due", "{\"type\": \"noop\"}").get("id").longValue();
        long announced = tasks.enqueue("wk-due", "{\"type\": \"noop\", \"delaySeconds\": 1}").get("id").longValue();
        tasks.awaitState(now, "succeeded", PATIENCE);
        // The safety poll here is 10 s: only the timer set to the next due time starts them on time.
        // (It takes milliseconds; the bound is generous for a test JVM busy with other contexts.)
        for (long id : List.of(hidden, announced)) {
            JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
            assertThat(Duration.between(Tasks.time(done, "runAt"), Tasks.time(done, "startedAt")))
                    .isBetween(Duration.ZERO, Duration.ofMillis(300));
        }
    }

    @Test
    void aTaskDueInTheYear9999LeavesItsQueueWorkingOnWhatIsDueNow() {
        long far = tasks.enqueue("wk-due", "{\"type\": \"noop\", \"runAt\": \"9999-12-31T23:59:59Z\"}")
                .get("id").longValue();
        try {
            long now = tasks.enqueue("wk-due", "{\"type\": \"noop\"}").get("id").longValue();
            long soon = tasks.enqueue("wk-due", "{\"type\": \"noop\", \"delaySeconds\": 1}").get("id").longValue();
            // well within the 10 s safety poll: the wake-ups and the due timer still work
            tasks.awaitState(now, "succeeded", Duration.ofSeconds(5));
            JsonNode done = tasks.awaitState(soon, "succeeded", Duration.ofSeconds(5));
            assertThat(Duration.between(Tasks.time(done, "runAt"), Tasks.time(done, "startedAt")))
                    .isLessThan(Duration.ofMillis(500));
        } finally {
            tasks.post("/api/v1/tasks/" + far + "/cancel", 200);
        }
    }

    @Test
    void anIdleQueuePicksUpANewTaskWithoutWaitingForThePoll() throws InterruptedException {
        Thread.sleep(300); // let the pipeline go idle after its first poll
        for (int i = 0; i < 5; i++) {
            long id = tasks.enqueue("wk-pickup", "{\"type\": \"noop\"}").get("id").longValue();
            JsonNode done = tasks.awaitState(id, "succeeded", Duration.ofSeconds(5));
            assertThat(Duration.between(Tasks.time(done, "createdAt"), Tasks.time(done, "startedAt")))
                    .isLessThan(Duration.ofMillis(500));
        }
    }

    @Test
    void aTaskWhoseWorkerDiedIsRescuedAfterItsLeaseAndFinished() {
        tasks.post("/api/v1/queues/wk-rescue/pause", 200);
        long id = tasks.enqueue("wk-rescue", "{\"type\": \"noop\"}").get("id").longValue();
        // A replica that claimed it and died: running, its lease already expired.
        Sql.update("UPDATE task SET state = 'running', attempt = 1, worker_id = 'dead-replica', started_at = now(),"
                + " lease_expires_at = now() - interval '1 second' WHERE id = ?", id);
        TaskRows.follow(id);
        tasks.post("/api/v1/queues/wk-rescue/resume", 200);
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(2);
        assertThat(done.get("lastError").stringValue()).isEqualTo("lease expired");
        assertThat(Sql.column("SELECT detail->>'error' FROM task_event WHERE task_id = ? AND name = 'queued' ORDER BY id", id))
                .containsExactly(null, "lease expired");
    }

    @Test
    void theWorkersListShowsThisReplicaWithItsQueues() {
        JsonNode workers = api().get().uri("/api/v1/workers").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        List<String> kinds = new ArrayList<>();
        workers.get("workers").forEach(w -> {
            if (w.get("queues").toString().contains("wk-basic")) {
                kinds.add(w.get("kind").stringValue());
                assertThat(w.get("inFlight").isInt()).isTrue();
                assertThat(w.get("lastSeenAt").stringValue()).endsWith("Z");
            }
        });
        assertThat(kinds).contains("replica");
    }

    @Test
    void theQueueListCountsTasksByStateAndShowsWorkedQueues() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        tasks.awaitState(id, "succeeded", PATIENCE);
        JsonNode queues = api().get().uri("/api/v1/queues").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        List<String> names = new ArrayList<>();
        queues.get("queues").forEach(q -> names.add(q.get("name").stringValue()));
        assertThat(names).contains("wk-basic", "wk-pickup");
        queues.get("queues").forEach(q -> {
            if (q.get("name").stringValue().equals("wk-basic")) {
                assertThat(q.get("workedInProcess").booleanValue()).isTrue();
                for (String field : List.of("queued", "running", "succeeded", "failed", "cancelled")) {
                    assertThat(q.get(field).isNumber()).as(field).isTrue();
                }
                assertThat(q.has("oldestQueuedAgeSeconds")).isTrue();
                assertThat(q.has("paused")).isTrue();
            }
        });
    }

    private long enqueueOrder(String json) {
        return tasks.enqueue("wk-order", json).get("id").longValue();
    }

    private static List<String> events(long id) {
        return Sql.column("SELECT name FROM task_event WHERE task_id = ? ORDER BY id", id);
    }

    /** The events that change the state, without progress. */
    private static List<String> transitions(long id) {
        return Sql.column("SELECT name FROM task_event WHERE task_id = ? AND name <> 'progress' ORDER BY id", id);
    }

    private static long progressEvents(long id) {
        return Long.parseLong(Sql.column("SELECT count(*) FROM task_event WHERE task_id = ? AND name = 'progress'", id)
                .get(0));
    }

    private static List<Instant> eventTimes(long id, String name) {
        return Sql.column("SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM task_event"
                + " WHERE task_id = ? AND name = ? ORDER BY id", id, name).stream().map(Instant::parse).toList();
    }
}
