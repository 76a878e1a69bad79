package dev.tasklane.flow;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Flow control as the contract states it, driven by pull workers against one replica (the
 * shared context works no queue in-process): the settings, their validation, concurrency keys,
 * and every way a slot or a rate quota is taken and given back.
 */
final class FlowControlApiIntegrationTests extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final MediaType MERGE_PATCH = MediaType.parseMediaType("application/merge-patch+json");

    @Autowired
    private TaskStore store;
    @Autowired
    private ClaimHandoff handoff;
    @LocalServerPort
    private int port;

    private Tasks tasks;
    private String queue;

    @BeforeEach
    void setUp() {
        tasks = new Tasks(api());
        queue = TaskFixtures.uniqueQueue("flow");
    }

    @Test
    void aPatchSetsMergesAndClearsTheQueuesLimitsAndGetQueuesShowsThem() {
        JsonNode set = patch("{\"maxRunning\": 5, \"rate\": {\"count\": 50, \"periodSeconds\": 1},"
                + " \"fairness\": \"round-robin\"}", 200);
        assertThat(set.get("name").stringValue()).isEqualTo(queue);
        assertThat(set.get("limits").toString()).isEqualTo("{\"maxRunning\":5,\"maxRunningPerKey\":null,"
                + "\"rate\":{\"count\":50,\"periodSeconds\":1},\"ratePerKey\":null,\"fairness\":\"round-robin\"}");
        assertThat(set.get("heldBack").toString()).isEqualTo("{\"maxRunning\":0,\"maxRunningPerKey\":0,\"rate\":0}");

        JsonNode merged = patch("{\"maxRunningPerKey\": 2, \"rate\": null}", 200).get("limits");
        assertThat(merged.get("maxRunning").intValue()).isEqualTo(5);
        assertThat(merged.get("maxRunningPerKey").intValue()).isEqualTo(2);
        assertThat(merged.get("rate").isNull()).isTrue();
        assertThat(merged.get("fairness").stringValue()).isEqualTo("round-robin");

        api().post().uri("/api/v1/queues/{q}/pause", queue).exchange().expectStatus().isOk();
        JsonNode listed = await().atMost(Duration.ofSeconds(10)).until(() -> listedQueue(), q -> q != null
                && q.get("paused").booleanValue());
        assertThat(listed.get("limits").get("maxRunning").intValue()).isEqualTo(5);

        JsonNode cleared = patch("{\"maxRunning\": null, \"maxRunningPerKey\": null, \"fairness\": null}", 200);
        assertThat(cleared.get("limits").toString()).isEqualTo("{\"maxRunning\":null,\"maxRunningPerKey\":null,"
                + "\"rate\":null,\"ratePerKey\":null,\"fairness\":\"fifo\"}");
        assertThat(cleared.get("paused").booleanValue()).isTrue();
        api().patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"maxRunning\": 7}").exchange().expectStatus().isOk();
    }

    @Test
    void badSettingsAre422NamingTheFieldAndWrongJsonTypes400() {
        assertInvalid("{\"maxRunning\": 0}", "maxRunning");
        assertInvalid("{\"maxRunningPerKey\": 1000001}", "maxRunningPerKey");
        assertInvalid("{\"maxRunning\": 2.5}", "maxRunning");
        assertInvalid("{\"rate\": {\"count\": 5}}", "rate.periodSeconds");
        assertInvalid("{\"ratePerKey\": {\"periodSeconds\": 5}}", "ratePerKey.count");
        assertInvalid("{\"rate\": {\"count\": 5, \"periodSeconds\": 1, \"burst\": 3}}", "rate.burst");
        assertInvalid("{\"fairness\": \"lifo\"}", "fairness");
        assertInvalid("{\"maxRunning\": 3, \"concurrency\": 4}", "concurrency");
        patchRaw("{\"maxRunning\": \"5\"}", 400);
        patchRaw("[1]", 400);
        patchRaw("{\"rate\": 5}", 400);
        patchRaw("{", 400);
        api().patch().uri("/api/v1/queues/{q}", queue).contentType(MediaType.TEXT_PLAIN)
                .bodyValue("maxRunning=5").exchange().expectStatus().isEqualTo(415);
        api().patch().uri("/api/v1/queues/{q}", "bad name!").contentType(MERGE_PATCH)
                .bodyValue("{}").exchange().expectStatus().isEqualTo(422);
        // nothing was applied by any of them
        assertThat(patch("{}", 200).get("limits").get("maxRunning").isNull()).isTrue();
    }

    @Test
    void aConcurrencyKeyIsInTheTaskItsEventsItsClaimAndAFilterOfTheTaskList() throws Exception {
        long keyed = tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"tenant-7\"}").get("id").longValue();
        long plain = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        assertThat(tasks.get(keyed).get("concurrencyKey").stringValue()).isEqualTo("tenant-7");
        assertThat(tasks.get(plain).get("concurrencyKey").isNull()).isTrue();

        JsonNode claimed = claim("{\"workerId\": \"w\", \"max\": 10}");
        assertThat(keysOf(claimed.get("tasks"))).containsExactlyInAnyOrder("tenant-7", "");
        assertThat(ids(api().get().uri("/api/v1/tasks?queue={q}&concurrencyKey=tenant-7", queue).exchange()
                .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody()))
                .containsExactly(keyed);

        List<String> data = SseClient.take(new SseClient(port).events("/api/v1/tasks/" + keyed + "/events", null), 2,
                Duration.ofSeconds(10)).stream().map(SseClient.Event::data).toList();
        assertThat(data).hasSize(2);
        assertThat(data).allSatisfy(json -> assertThat(JSON.readTree(json).get("concurrencyKey").stringValue())
                .isEqualTo("tenant-7"));

        String tooLong = "k".repeat(129);
        api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"concurrencyKey\": \"" + tooLong + "\"}").exchange()
                .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("concurrencyKey");
        api().post().uri("/api/v1/queues/{q}/tasks/batch", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\", \"concurrencyKey\": \"a\\u0000b\"}]}")
                .exchange().expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].field").isEqualTo("tasks[1].concurrencyKey");
        api().post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"t\", \"concurrencyKey\": \"\"}").exchange().expectStatus().isEqualTo(422);
        api().get().uri("/api/v1/tasks?concurrencyKey={k}", tooLong).exchange().expectStatus().isEqualTo(422);
    }

    @Test
    void maxRunningHoldsAcrossClaimsAndASlotFreesOnOutcomeCancelAndFailure() {
        patch("{\"maxRunning\": 2}", 200);
        for (int i = 0; i < 6; i++) {
            tasks.enqueue(queue, "{\"type\": \"t\"}");
        }
        List<Long> first = ids(claim("{\"workerId\": \"a\", \"max\": 10}"));
        assertThat(first).hasSize(2);
        assertThat(ids(claim("{\"workerId\": \"b\", \"max\": 10}"))).isEmpty();
        assertThat(await().atMost(Duration.ofSeconds(10)).until(() -> heldBack("maxRunning"), held -> held == 4))
                .isEqualTo(4);

        post("/api/v1/tasks/" + first.get(0) + "/complete", "{\"workerId\": \"a\"}");
        List<Long> second = ids(claim("{\"workerId\": \"b\", \"max\": 10}"));
        assertThat(second).hasSize(1);
        api().post().uri("/api/v1/tasks/{id}/cancel", first.get(1)).exchange().expectStatus().isOk();
        List<Long> third = ids(claim("{\"workerId\": \"c\", \"max\": 10}"));
        assertThat(third).hasSize(1);
        post("/api/v1/tasks/" + second.get(0) + "/fail", "{\"workerId\": \"b\", \"error\": \"no\", \"retry\": false}");
        assertThat(ids(claim("{\"workerId\": \"d\", \"max\": 10}"))).hasSize(1);
        assertThat(ids(claim("{\"workerId\": \"d\", \"max\": 10}"))).isEmpty();
    }

    @Test
    void aClaimThatWaitedForTheQueuesLockStartsItsTasksWhenItGotIt() throws Exception {
        patch("{\"maxRunning\": 10, \"rate\": {\"count\": 10, \"periodSeconds\": 60}}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        Instant lockReleasedAt;
        CompletableFuture<JsonNode> waiting;
        try (Connection holder = TestDatabase.get().connect()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT 1 FROM queue WHERE name = ? FOR UPDATE")) {
                lock.setString(1, queue);
                lock.executeQuery().close();
            }
            waiting = CompletableFuture.supplyAsync(() -> claim("{\"workerId\": \"w\"}"));
            Thread.sleep(1000);
            assertThat(waiting).isNotDone();
            try (PreparedStatement now = holder.prepareStatement("SELECT clock_timestamp()");
                 ResultSet row = now.executeQuery()) {
                row.next();
                lockReleasedAt = row.getObject(1, OffsetDateTime.class).toInstant();
            }
            holder.commit();
        }
        JsonNode started = waiting.get(10, TimeUnit.SECONDS).get("tasks").get(0);
        // the rate counts the claim from that moment too, so startedAt shows the rate as it was counted
        assertThat(Tasks.time(started, "startedAt")).isAfterOrEqualTo(lockReleasedAt);
        assertThat(Sql.column("SELECT s.started_at = t.started_at FROM queue_claim_start s"
                + " JOIN task t ON t.queue = s.queue WHERE s.queue = ?", queue)).containsExactly("t");
    }

    @Test
    void limitsByKeySetSinceTheReplicaLastReadThemStillHold() {
        patch("{\"maxRunning\": 10}", 200);
        enqueueBatch(IntStream.range(0, 3).mapToObj(i -> "{\"type\": \"t\", \"concurrencyKey\": \"k\"}").toList());
        // behind the replica's back: no NOTIFY, so its view still says the queue counts as a whole
        Sql.update("UPDATE queue SET max_running_per_key = 1 WHERE name = ?", queue);
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 10}"))).hasSize(1);
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 10}"))).isEmpty();
    }

    @Test
    void theOneCallClaimRefusesAQueueWhoseLimitsGoByKeyAndClaimsNothing() {
        patch("{\"maxRunningPerKey\": 1}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        assertThatThrownBy(() -> Sql.column("SELECT id FROM tasklane_claim_under_flow(?, NULL, 10, 'w',"
                + " gen_random_uuid(), 30000)", queue))
                .rootCause().isInstanceOf(SQLException.class).hasMessageContaining("by concurrency key")
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("TLKEY"));
        assertThat(Sql.column("SELECT state FROM task WHERE queue = ?", queue)).containsExactly("queued");
    }

    @Test
    void aPausedQueueWithLimitsAnswersNothingUntilResumed() {
        patch("{\"maxRunning\": 5}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        api().post().uri("/api/v1/queues/{q}/pause", queue).exchange().expectStatus().isOk();
        assertThat(ids(claim("{\"workerId\": \"w\"}"))).isEmpty();
        api().post().uri("/api/v1/queues/{q}/resume", queue).exchange().expectStatus().isOk();
        assertThat(ids(claim("{\"workerId\": \"w\"}"))).hasSize(1);
    }

    @Test
    void anExpiredLeaseKeepsItsSlotUntilTheTaskIsRescued() throws Exception {
        patch("{\"maxRunning\": 1}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        long lost = ids(claim("{\"workerId\": \"gone\", \"leaseSeconds\": 1}")).get(0);
        Thread.sleep(1500); // the lease has run out; this context runs no rescuer
        assertThat(ids(claim("{\"workerId\": \"b\", \"max\": 5}"))).isEmpty();
        assertThat(store.rescueExpired(100).map(task -> task.id()).collectList().block()).contains(lost);
        assertThat(ids(claim("{\"workerId\": \"b\", \"max\": 5}"))).hasSize(1);
    }

    @Test
    void aWaitingLongPollWakesWhenASlotFrees() throws Exception {
        patch("{\"maxRunning\": 1}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        tasks.enqueue(queue, "{\"type\": \"t\"}");
        long running = ids(claim("{\"workerId\": \"a\"}")).get(0);
        CompletableFuture<JsonNode> poll = CompletableFuture.supplyAsync(() ->
                claim("{\"workerId\": \"b\", \"waitSeconds\": 20}"));
        Thread.sleep(500);
        assertThat(poll).isNotDone();
        long freedAt = System.nanoTime();
        post("/api/v1/tasks/" + running + "/complete", "{\"workerId\": \"a\"}");
        assertThat(ids(poll.get(10, TimeUnit.SECONDS))).hasSize(1);
        assertThat(Duration.ofNanos(System.nanoTime() - freedAt)).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void aReleasedClaimGivesBackItsSlotButNotItsRateQuota() {
        patch("{\"maxRunning\": 1, \"rate\": {\"count\": 2, \"periodSeconds\": 3600}}", 200);
        for (int i = 0; i < 4; i++) {
            tasks.enqueue(queue, "{\"type\": \"t\"}");
        }
        JsonNode claimed = claim("{\"workerId\": \"a\"}").get("tasks").get(0);
        handoff.release(store, queue, UUID.fromString(claimed.get("leaseId").stringValue()), "released: test").block();
        assertThat(tasks.get(claimed.get("id").longValue()).get("state").stringValue()).isEqualTo("queued");

        List<Long> again = ids(claim("{\"workerId\": \"b\"}"));
        assertThat(again).hasSize(1); // the slot came back
        post("/api/v1/tasks/" + again.get(0) + "/complete", "{\"workerId\": \"b\"}");
        assertThat(ids(claim("{\"workerId\": \"c\", \"max\": 10}"))).isEmpty(); // two claims started: the quota is spent
        assertThat(await().atMost(Duration.ofSeconds(10)).until(() -> heldBack("rate"), held -> held == 3))
                .isEqualTo(3);
    }

    @Test
    void maxRunningPerKeyRunsEachKeysTasksOneAtATime() {
        patch("{\"maxRunningPerKey\": 1}", 200);
        List<String> batch = new ArrayList<>();
        for (int key = 0; key < 20; key++) {
            for (int i = 0; i < 3; i++) {
                batch.add("{\"type\": \"t\", \"concurrencyKey\": \"key-" + key + "\"}");
            }
        }
        batch.add("{\"type\": \"t\"}");
        batch.add("{\"type\": \"t\"}");
        enqueueBatch(batch);
        for (int round = 0; round < 3; round++) {
            JsonNode claimed = claim("{\"workerId\": \"w\", \"max\": 100}").get("tasks");
            // one task of each of the 20 keys, and one of the tasks without a key (their own group)
            assertThat(claimed).hasSize(round < 2 ? 21 : 20);
            assertThat(keysOf(claimed)).doesNotHaveDuplicates();
            assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 100}"))).isEmpty();
            for (JsonNode task : claimed) {
                post("/api/v1/tasks/" + task.get("id").longValue() + "/complete", "{\"workerId\": \"w\"}");
            }
        }
    }

    @Test
    void roundRobinStartsAllOfASmallKeysTasksBeforeTheBigKeysTwoHundredth() {
        patch("{\"fairness\": \"round-robin\"}", 200);
        for (int chunk = 0; chunk < 10; chunk++) {
            enqueueBatch(IntStream.range(0, 1000).mapToObj(i -> "{\"type\": \"t\", \"concurrencyKey\": \"A\"}").toList());
        }
        enqueueBatch(IntStream.range(0, 10).mapToObj(i -> "{\"type\": \"t\", \"concurrencyKey\": \"B\"}").toList());
        List<String> startOrder = new ArrayList<>();
        while (startOrder.stream().filter("B"::equals).count() < 10) {
            JsonNode claimed = claim("{\"workerId\": \"w\", \"max\": 7}").get("tasks");
            assertThat(claimed).isNotEmpty();
            startOrder.addAll(keysOf(claimed));
        }
        assertThat(startOrder.stream().filter("A"::equals).count()).isLessThan(200);
        // within a key the order stays priority, runAt, id
        long urgent = tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"B\", \"priority\": 5}")
                .get("id").longValue();
        tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"B\"}");
        assertThat(keysOf(claim("{\"workerId\": \"w\", \"max\": 2}").get("tasks"))).containsExactlyInAnyOrder("A", "B");
        assertThat(tasks.get(urgent).get("state").stringValue()).isEqualTo("running");
    }

    @Test
    void aRateLimitCountsClaimsInASlidingWindow() {
        patch("{\"rate\": {\"count\": 5, \"periodSeconds\": 2}}", 200);
        enqueueBatch(IntStream.range(0, 30).mapToObj(i -> "{\"type\": \"t\"}").toList());
        List<Long> burst = ids(claim("{\"workerId\": \"w\", \"max\": 100}"));
        assertThat(burst).hasSize(5);
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 100}"))).isEmpty();
        JsonNode next = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                .until(() -> claim("{\"workerId\": \"w\", \"max\": 100}").get("tasks"), claimed -> !claimed.isEmpty());
        assertThat(next).hasSize(5);
        assertThat(Duration.between(Tasks.time(tasks.get(burst.get(0)), "startedAt"),
                Tasks.time(next.get(0), "startedAt"))).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void claimsUnderAQueueWideRateCountForTheirOwnKeysOnceTheRateGoesByKey() {
        patch("{\"rate\": {\"count\": 3, \"periodSeconds\": 60}}", 200);
        enqueueBatch(IntStream.range(0, 3).mapToObj(i -> "{\"type\": \"t\", \"concurrencyKey\": \"a\"}").toList());
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 10}"))).hasSize(3);

        patch("{\"rate\": null, \"ratePerKey\": {\"count\": 3, \"periodSeconds\": 60}}", 200);
        enqueueBatch(IntStream.range(0, 3).mapToObj(i -> "{\"type\": \"t\", \"concurrencyKey\": \"a\"}").toList());
        enqueueBatch(IntStream.range(0, 3).mapToObj(i -> "{\"type\": \"t\"}").toList());
        // key a started its 3 within the window; the tasks without a key started none
        assertThat(keysOf(claim("{\"workerId\": \"w\", \"max\": 10}").get("tasks"))).containsExactly("", "", "");
    }

    @Test
    void aLongPollHeldBackByTheRateAnswersWhenTheWindowMoves() throws Exception {
        patch("{\"ratePerKey\": {\"count\": 1, \"periodSeconds\": 1}}", 200);
        tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"k\"}");
        tasks.enqueue(queue, "{\"type\": \"t\", \"concurrencyKey\": \"k\"}");
        assertThat(ids(claim("{\"workerId\": \"w\", \"max\": 5}"))).hasSize(1);
        long waitingFrom = System.nanoTime();
        JsonNode second = claim("{\"workerId\": \"w\", \"max\": 5, \"waitSeconds\": 10}");
        assertThat(ids(second)).hasSize(1);
        assertThat(Duration.ofNanos(System.nanoTime() - waitingFrom))
                .isBetween(Duration.ofMillis(300), Duration.ofMillis(1500)); // by its timer, not the 2 s safety poll
    }

    private void assertInvalid(String body, String field) {
        JsonNode problem = patchRaw(body, 422);
        assertThat(problem.get("errors").findValuesAsString("field")).as(body).contains(field);
    }

    private JsonNode patch(String body, int status) {
        return patchRaw(body, status);
    }

    private JsonNode patchRaw(String body, int status) {
        return api().patch().uri("/api/v1/queues/{q}", queue).contentType(MERGE_PATCH).bodyValue(body).exchange()
                .expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private JsonNode claim(String body) {
        return api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult()
                .getResponseBody();
    }

    private void post(String uri, String body) {
        api().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody().returnResult();
    }

    private void enqueueBatch(List<String> items) {
        api().post().uri("/api/v1/queues/{q}/tasks/batch", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"tasks\": [" + String.join(",", items) + "]}").exchange().expectStatus().isCreated()
                .expectBody().returnResult();
    }

    private JsonNode listedQueue() {
        JsonNode all = api().get().uri("/api/v1/queues").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        for (JsonNode q : all.get("queues")) {
            if (q.get("name").stringValue().equals(queue)) {
                return q;
            }
        }
        return null;
    }

    private long heldBack(String reason) {
        JsonNode listed = listedQueue();
        return listed == null ? -1 : listed.get("heldBack").get(reason).longValue();
    }

    private static List<Long> ids(JsonNode answer) {
        List<Long> ids = new ArrayList<>();
        answer.get("tasks").forEach(task -> ids.add(task.get("id").longValue()));
        return ids;
    }

    private static List<String> keysOf(JsonNode claimed) {
        List<String> keys = new ArrayList<>();
        claimed.forEach(task -> keys.add(task.get("concurrencyKey").isNull() ? "" : task.get("concurrencyKey").stringValue()));
        return keys;
    }
}
