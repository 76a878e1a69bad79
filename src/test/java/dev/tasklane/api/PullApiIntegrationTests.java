package dev.tasklane.api;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/** External workers over HTTP, on queues no replica works in-process (the context's rescuer runs). */
final class PullApiIntegrationTests extends WorkerIntegrationTest {

    private Tasks tasks;
    private String queue;

    @BeforeEach
    void setUp() {
        tasks = new Tasks(api());
        queue = TaskFixtures.uniqueQueue("pull");
    }

    @Test
    void aClaimHandsOutRunningTasksWithTheWorkersLease() {
        long id = tasks.enqueue(queue, "{\"type\": \"resize\", \"payload\": {\"w\": 10}}").get("id").longValue();
        JsonNode claimed = claim("{\"workerId\": \"w1\", \"leaseSeconds\": 60}").get("tasks");
        assertThat(claimed).hasSize(1);
        JsonNode task = claimed.get(0);
        assertThat(task.get("id").longValue()).isEqualTo(id);
        assertThat(task.get("state").stringValue()).isEqualTo("running");
        assertThat(task.get("workerId").stringValue()).isEqualTo("w1");
        assertThat(task.get("attempt").intValue()).isEqualTo(1);
        assertThat(task.get("payload").get("w").intValue()).isEqualTo(10);
        assertThat(Duration.between(Instant.now(), Tasks.time(task, "leaseExpiresAt")))
                .isBetween(Duration.ofSeconds(50), Duration.ofSeconds(61));
        assertThat(claim("{\"workerId\": \"w2\"}").get("tasks")).isEmpty();
    }

    @Test
    void claimsFollowPriorityThenRunAtThenIdAndSkipTasksNotYetDue() {
        Instant past = Instant.now().minusSeconds(60);
        long later = enqueue("{\"type\": \"t\", \"runAt\": \"" + past.plusSeconds(5) + "\"}");
        long earlier = enqueue("{\"type\": \"t\", \"runAt\": \"" + past + "\"}");
        long urgent = enqueue("{\"type\": \"t\", \"priority\": 9}");
        long sameTime = enqueue("{\"type\": \"t\", \"runAt\": \"" + past + "\"}");
        enqueue("{\"type\": \"t\", \"priority\": 100, \"delaySeconds\": 3600}");
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 10}"))).containsExactly(urgent, earlier, sameTime, later);
    }

    @Test
    void aClaimTakesOnlyTheTypesAsked() {
        long image = enqueue("{\"type\": \"image\"}");
        enqueue("{\"type\": \"video\"}");
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 5, \"types\": [\"image\", \"audio\"]}"))).containsExactly(image);
    }

    @Test
    void aLongPollAnswersEmptyAtItsDeadline() {
        long started = System.nanoTime();
        assertThat(claim("{\"workerId\": \"w\", \"waitSeconds\": 1}").get("tasks")).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isBetween(Duration.ofMillis(900), Duration.ofSeconds(5));
    }

    @Test
    void aTaskDueInTheYear9999ArrivingDuringALongPollLeavesLaterPollsWokenAtOnce() throws Exception {
        CompletableFuture<JsonNode> waiting = CompletableFuture.supplyAsync(() -> claim("{\"workerId\": \"w\", \"waitSeconds\": 1}"));
        Thread.sleep(300);
        long far = enqueue("{\"type\": \"t\", \"runAt\": \"9999-12-31T23:59:59Z\"}");
        assertThat(waiting.get(10, TimeUnit.SECONDS).get("tasks")).isEmpty();
        // Woken by the enqueue, a poll answers in milliseconds; the 2 s safety poll would take 1 s on average.
        for (int round = 0; round < 4; round++) {
            CompletableFuture<JsonNode> poll = CompletableFuture.supplyAsync(() -> claim("{\"workerId\": \"w\", \"waitSeconds\": 10}"));
            Thread.sleep(300);
            long id = enqueue("{\"type\": \"t\"}");
            long enqueued = System.nanoTime();
            assertThat(ids(poll.get(15, TimeUnit.SECONDS))).containsExactly(id);
            assertThat(Duration.ofNanos(System.nanoTime() - enqueued)).as("round " + round).isLessThan(Duration.ofMillis(900));
        }
        tasks.post("/api/v1/tasks/" + far + "/cancel", 200);
    }

    @Test
    void aPausedQueueGivesNothing() {
        enqueue("{\"type\": \"t\"}");
        tasks.post("/api/v1/queues/" + queue + "/pause", 200);
        assertThat(claim("{\"workerId\": \"w\"}").get("tasks")).isEmpty();
        tasks.post("/api/v1/queues/" + queue + "/resume", 200);
        assertThat(claim("{\"workerId\": \"w\"}").get("tasks")).hasSize(1);
    }

    @Test
    void anExpiredLeaseIsRescuedAndTheFirstWorkersCompleteThenChangesNothing() {
        long id = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"slow\", \"leaseSeconds\": 1}");
        JsonNode rescued = tasks.awaitState(id, "queued", PATIENCE);
        assertThat(rescued.get("lastError").stringValue()).isEqualTo("lease expired");
        assertThat(rescued.get("attempt").intValue()).isEqualTo(1);
        assertThat(ids(claim("{\"workerId\": \"fast\"}"))).containsExactly(id);
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"slow\", \"result\": 1}", 409)
                .expectBody().jsonPath("$.state").isEqualTo("running");
        JsonNode task = tasks.get(id);
        assertThat(task.get("workerId").stringValue()).isEqualTo("fast");
        assertThat(task.get("attempt").intValue()).isEqualTo(2);
    }

    @Test
    void twoPullWorkersSharingAnIdCannotCompleteEachOthersLease() {
        long id = enqueue("{\"type\": \"t\"}");
        JsonNode first = claim("{\"workerId\": \"shared\", \"leaseSeconds\": 1}").get("tasks").get(0);
        tasks.awaitState(id, "queued", PATIENCE); // its lease expired and the rescuer took it back
        JsonNode second = claim("{\"workerId\": \"shared\"}").get("tasks").get(0);
        String stale = first.get("leaseId").stringValue();
        String current = second.get("leaseId").stringValue();
        assertThat(current).isNotEqualTo(stale);

        for (String call : List.of("heartbeat", "progress", "complete")) {
            post("/api/v1/tasks/" + id + "/" + call, "{\"workerId\": \"shared\", \"leaseId\": \"" + stale + "\"}", 409)
                    .expectBody().jsonPath("$.state").isEqualTo("running");
        }
        post("/api/v1/tasks/" + id + "/fail", "{\"workerId\": \"shared\", \"leaseId\": \"" + stale
                + "\", \"error\": \"x\"}", 409).expectBody().jsonPath("$.state").isEqualTo("running");
        post("/api/v1/tasks/" + id + "/heartbeat", "{\"workerId\": \"shared\", \"leaseId\": \"" + current + "\"}", 200)
                .expectBody().jsonPath("$.leaseId").isEqualTo(current);
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"shared\", \"leaseId\": \"" + current + "\"}", 200)
                .expectBody().jsonPath("$.state").isEqualTo("succeeded").jsonPath("$.attempt").isEqualTo(2);
    }

    @Test
    void aClaimHandsOutALeaseIdThatNobodyElseSees() {
        long id = enqueue("{\"type\": \"t\"}");
        JsonNode claimed = claim("{\"workerId\": \"w\"}").get("tasks").get(0);
        assertThat(claimed.get("leaseId").stringValue()).matches("[0-9a-f-]{36}");
        assertThat(claimed.get("timeoutAt").isString()).isTrue();
        assertThat(tasks.get(id).has("leaseId")).isFalse();
        assertThat(body(api().get().uri("/api/v1/tasks?queue=" + queue).exchange().expectStatus().isOk())
                .get("tasks").get(0).has("leaseId")).isFalse();
    }

    @Test
    void aLeaseIdOfTheWrongJsonTypeIs400AndOneNeverHandedOutIs409() {
        long id = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"w\"}");
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\", \"leaseId\": 42}", 400).expectBody();
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\", \"leaseId\": \"not-a-lease\"}", 409)
                .expectBody().jsonPath("$.state").isEqualTo("running");
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\"}", 200).expectBody()
                .jsonPath("$.state").isEqualTo("succeeded");
    }

    @Test
    void aClaimMayNameAtMostAHundredTypes() {
        String types = java.util.stream.IntStream.range(0, 101).mapToObj(i -> "\"t" + i + "\"")
                .collect(java.util.stream.Collectors.joining(","));
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\", \"types\": [" + types + "]}", 422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("types");
    }

    @Test
    void heartbeatsKeepATaskPastItsFirstLease() throws InterruptedException {
        long id = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"w\", \"leaseSeconds\": 1}");
        for (int i = 0; i < 6; i++) {
            Thread.sleep(400); // the lease is the point here: time must pass
            post("/api/v1/tasks/" + id + "/heartbeat", "{\"workerId\": \"w\", \"leaseSeconds\": 1}", 200).expectBody()
                    .jsonPath("$.state").isEqualTo("running");
        }
        post("/api/v1/tasks/" + id + "/progress", "{\"workerId\": \"w\", \"percent\": 50, \"message\": \"half\"}", 200)
                .expectBody().jsonPath("$.progress.percent").isEqualTo(50).jsonPath("$.progress.message").isEqualTo("half");
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\", \"result\": {\"ok\": true}}", 200).expectBody()
                .jsonPath("$.state").isEqualTo("succeeded")
                .jsonPath("$.result.ok").isEqualTo(true)
                .jsonPath("$.attempt").isEqualTo(1);
        post("/api/v1/tasks/" + id + "/complete", "{\"workerId\": \"w\"}", 409).expectBody()
                .jsonPath("$.state").isEqualTo("succeeded");
        assertThat(dev.tasklane.testsupport.Sql.column("SELECT name FROM task_event WHERE task_id = ? ORDER BY id", id))
                .containsExactly("queued", "running", "progress", "succeeded");
    }

    @Test
    void failWithoutRetryFailsAndWithRetryRequeuesWithBackoff() {
        long permanent = enqueue("{\"type\": \"t\"}");
        long transient_ = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"w\", \"max\": 2}");
        post("/api/v1/tasks/" + permanent + "/fail", "{\"workerId\": \"w\", \"error\": \"bad input\", \"retry\": false}", 200)
                .expectBody().jsonPath("$.state").isEqualTo("failed").jsonPath("$.lastError").isEqualTo("bad input");
        JsonNode requeued = body(post("/api/v1/tasks/" + transient_ + "/fail", "{\"workerId\": \"w\", \"error\": \"timeout\"}", 200));
        assertThat(requeued.get("state").stringValue()).isEqualTo("queued");
        assertThat(requeued.get("lastError").stringValue()).isEqualTo("timeout");
        assertThat(Tasks.time(requeued, "runAt")).isAfter(Instant.now().minusMillis(50));
        assertThat(requeued.get("workerId").isNull()).isTrue();
    }

    @Test
    void cancellingAPulledTaskMakesTheWorkersNextCall409() {
        long id = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"w\"}");
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        for (String call : List.of("heartbeat", "progress", "complete")) {
            post("/api/v1/tasks/" + id + "/" + call, "{\"workerId\": \"w\"}", 409).expectBody()
                    .jsonPath("$.state").isEqualTo("cancelled");
        }
        post("/api/v1/tasks/" + id + "/fail", "{\"workerId\": \"w\", \"error\": \"x\"}", 409).expectBody();
    }

    @Test
    void aReleaseQueuesTheTaskAgainAtOnceCountingNeitherTheAttemptNorASnooze() {
        long id = enqueue("{\"type\": \"t\", \"maxAttempts\": 1, \"maxSnoozes\": 0}");
        String lease = claim("{\"workerId\": \"w\"}").get("tasks").get(0).get("leaseId").stringValue();
        JsonNode released = body(post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \""
                + lease + "\", \"reason\": \"worker w stopped\"}", 200));
        assertThat(released.get("state").stringValue()).isEqualTo("queued");
        assertThat(released.get("attempt").intValue()).isZero();
        assertThat(released.get("snoozes").intValue()).isZero();
        assertThat(released.get("lastError").stringValue()).isEqualTo("released: worker w stopped");
        assertThat(released.get("workerId").isNull()).isTrue();
        assertThat(Tasks.time(released, "runAt")).isBefore(Instant.now().plusSeconds(1));
        assertThat(dev.tasklane.testsupport.Sql.column("SELECT name || ' ' || coalesce(detail->>'error', '-')"
                + " FROM task_event WHERE task_id = ? ORDER BY id", id))
                .containsExactly("queued -", "running -", "queued released: worker w stopped");

        JsonNode again = claim("{\"workerId\": \"w2\"}").get("tasks").get(0);
        assertThat(again.get("attempt").intValue()).as("the released attempt was not counted").isEqualTo(1);
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w2\", \"leaseId\": \""
                + again.get("leaseId").stringValue() + "\"}", 200)
                .expectBody().jsonPath("$.lastError").isEqualTo("released: handed back by its worker");
    }

    @Test
    void aReleaseOfALeaseNoLongerHeldIs409AndOfAnUnknownTaskIs404() {
        long id = enqueue("{\"type\": \"t\"}");
        String lease = claim("{\"workerId\": \"w\"}").get("tasks").get(0).get("leaseId").stringValue();
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"intruder\", \"leaseId\": \"" + lease + "\"}", 409)
                .expectBody().jsonPath("$.state").isEqualTo("running");
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \"" + java.util.UUID.randomUUID()
                + "\"}", 409).expectBody().jsonPath("$.state").isEqualTo("running");
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\"}", 200);
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\"}", 409)
                .expectBody().jsonPath("$.state").isEqualTo("queued");
        post("/api/v1/tasks/987654321/release", "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\"}", 404).expectBody();
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\"}", 422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("leaseId");
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \"" + lease
                + "\", \"reason\": \"\"}", 422).expectBody().jsonPath("$.errors[0].field").isEqualTo("reason");
    }

    @Test
    void aReleaseAfterTheLeaseExpiredIs409AndTheRescueCountsTheAttempt() {
        long id = enqueue("{\"type\": \"t\"}");
        String lease = claim("{\"workerId\": \"w\", \"leaseSeconds\": 1}").get("tasks").get(0).get("leaseId").stringValue();
        dev.tasklane.testsupport.Sql.update("UPDATE task SET lease_expires_at = now() - interval '1 second' WHERE id = ?", id);
        post("/api/v1/tasks/" + id + "/release", "{\"workerId\": \"w\", \"leaseId\": \"" + lease + "\"}", 409).expectBody();
        JsonNode rescued = tasks.awaitState(id, "queued", PATIENCE);
        assertThat(rescued.get("lastError").stringValue()).isEqualTo("lease expired");
        assertThat(rescued.get("attempt").intValue()).isEqualTo(1);
    }

    @Test
    void anotherWorkersCallsAre409() {
        long id = enqueue("{\"type\": \"t\"}");
        claim("{\"workerId\": \"owner\"}");
        post("/api/v1/tasks/" + id + "/heartbeat", "{\"workerId\": \"intruder\"}", 409).expectBody()
                .jsonPath("$.state").isEqualTo("running");
        post("/api/v1/tasks/987654321/heartbeat", "{\"workerId\": \"w\"}", 404).expectBody();
    }

    @Test
    void pullWorkersAppearInTheWorkerList() {
        claim("{\"workerId\": \"lister-" + queue + "\"}");
        JsonNode workers = api().get().uri("/api/v1/workers").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("workers");
        List<String> found = new ArrayList<>();
        workers.forEach(w -> {
            if (w.get("id").stringValue().equals("lister-" + queue)) {
                found.add(w.get("kind").stringValue() + " " + w.get("queues").get(0).stringValue() + " " + w.get("inFlight"));
            }
        });
        assertThat(found).containsExactly("pull " + queue + " 0");
    }

    @Test
    void invalidClaimsAre4xx() {
        post("/api/v1/queues/" + queue + "/claims", "{}", 422).expectBody().jsonPath("$.errors[0].field").isEqualTo("workerId");
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\", \"max\": 101}", 422).expectBody();
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\", \"waitSeconds\": 31}", 422).expectBody();
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\", \"leaseSeconds\": 0}", 422).expectBody();
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": \"w\", \"types\": \"t\"}", 400).expectBody();
        post("/api/v1/queues/" + queue + "/claims", "{\"workerId\": 7}", 400).expectBody();
        post("/api/v1/tasks/1/progress", "{\"workerId\": \"w\", \"percent\": 101}", 422).expectBody();
        post("/api/v1/tasks/1/fail", "{\"workerId\": \"w\"}", 422).expectBody().jsonPath("$.errors[0].field").isEqualTo("error");
    }

    private long enqueue(String json) {
        return tasks.enqueue(queue, json).get("id").longValue();
    }

    private JsonNode claim(String json) {
        return body(post("/api/v1/queues/" + queue + "/claims", json, 200));
    }

    private WebTestClient.ResponseSpec post(String uri, String json, int status) {
        return api().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange()
                .expectStatus().isEqualTo(status);
    }

    private static JsonNode body(WebTestClient.ResponseSpec response) {
        return response.expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private static List<Long> ids(JsonNode claimed) {
        List<Long> ids = new ArrayList<>();
        claimed.get("tasks").forEach(t -> ids.add(t.get("id").longValue()));
        return ids;
    }
}
