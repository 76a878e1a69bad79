package dev.tasklane.api;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.matchesPattern;

final class TaskApiIntegrationTests extends IntegrationTest {

    @LocalServerPort
    private int port;

    static final String MICROS_UTC = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z";

    @Test
    void enqueueAnswers201WithLocationAndTheTaskShapedLikeTheContract() {
        String queue = TaskFixtures.uniqueQueue("enqueue");
        WebTestClient.ResponseSpec response = post("/api/v1/queues/" + queue + "/tasks",
                "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 500}}");
        response.expectStatus().isCreated()
                .expectHeader().valueMatches(HttpHeaders.LOCATION, "/api/v1/tasks/\\d+")
                .expectHeader().doesNotExist(TaskController.REPLAYED_HEADER)
                .expectBody()
                .jsonPath("$.id").isNumber()
                .jsonPath("$.queue").isEqualTo(queue)
                .jsonPath("$.type").isEqualTo("sleep")
                .jsonPath("$.payload.durationMs").isEqualTo(500)
                .jsonPath("$.state").isEqualTo("queued")
                .jsonPath("$.priority").isEqualTo(0)
                .jsonPath("$.attempt").isEqualTo(0)
                .jsonPath("$.maxAttempts").isEqualTo(5)
                .jsonPath("$.runAt").value(matchesPattern(MICROS_UTC))
                .jsonPath("$.createdAt").value(matchesPattern(MICROS_UTC))
                .jsonPath("$.startedAt").isEmpty()
                .jsonPath("$.finishedAt").isEmpty()
                .jsonPath("$.workerId").isEmpty()
                .jsonPath("$.leaseExpiresAt").isEmpty()
                .jsonPath("$.progress.percent").isEmpty()
                .jsonPath("$.progress.message").isEmpty()
                .jsonPath("$.result").isEmpty()
                .jsonPath("$.lastError").isEmpty()
                .jsonPath("$.idempotencyKey").isEmpty();
    }

    @Test
    void enqueuedTaskIsReadBackByItsLocation() {
        String queue = TaskFixtures.uniqueQueue("read");
        String location = post("/api/v1/queues/" + queue + "/tasks",
                "{\"type\": \"noop\", \"priority\": 7, \"maxAttempts\": 2, \"idempotencyKey\": \"k\"}")
                .expectStatus().isCreated().expectBody().returnResult().getResponseHeaders().getLocation().toString();
        api().get().uri(location).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.queue").isEqualTo(queue)
                .jsonPath("$.payload").isEmpty()
                .jsonPath("$.priority").isEqualTo(7)
                .jsonPath("$.maxAttempts").isEqualTo(2)
                .jsonPath("$.idempotencyKey").isEqualTo("k");
    }

    @Test
    void enqueueWritesItsQueuedEventInTheSameTransaction() throws SQLException {
        long id = enqueue(TaskFixtures.uniqueQueue("event"), "{\"type\": \"noop\"}");
        List<String> events = query("SELECT name || ' ' || state || ' ' || attempt || ' ' || (detail->'runAt' IS NOT NULL)"
                + " FROM task_event WHERE task_id = ?", id);
        assertThat(events).containsExactly("queued queued 0 true");
    }

    @Test
    void delayAndRunAtScheduleTheTask() {
        String queue = TaskFixtures.uniqueQueue("schedule");
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"noop\", \"runAt\": \"2030-01-02T03:04:05.123456+01:00\"}")
                .expectStatus().isCreated().expectBody()
                .jsonPath("$.runAt").isEqualTo("2030-01-02T02:04:05.123456Z");
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"noop\", \"delaySeconds\": 3600}")
                .expectStatus().isCreated().expectBody()
                .jsonPath("$.runAt").value(runAt -> assertThat(java.time.Instant.parse((String) runAt))
                        .isAfter(java.time.Instant.now().plusSeconds(3500)));
    }

    @Test
    void sameIdempotencyKeyOnTheSameQueueReturnsTheExistingTaskWith200() {
        String queue = TaskFixtures.uniqueQueue("idem");
        long first = enqueue(queue, "{\"type\": \"noop\", \"idempotencyKey\": \"order-1\"}");
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"other\", \"payload\": 1, \"idempotencyKey\": \"order-1\"}")
                .expectStatus().isOk()
                .expectHeader().valueEquals(TaskController.REPLAYED_HEADER, "true")
                .expectBody()
                .jsonPath("$.id").isEqualTo(first)
                .jsonPath("$.type").isEqualTo("noop");
    }

    @Test
    void sameIdempotencyKeyOnAnotherQueueMakesAnotherTask() {
        long first = enqueue(TaskFixtures.uniqueQueue("idem-a"), "{\"type\": \"noop\", \"idempotencyKey\": \"k\"}");
        long second = enqueue(TaskFixtures.uniqueQueue("idem-b"), "{\"type\": \"noop\", \"idempotencyKey\": \"k\"}");
        assertThat(second).isNotEqualTo(first);
    }

    @Test
    void idempotencyKeyIsFreeAgainOnceItsTaskIsDeleted() throws SQLException {
        String queue = TaskFixtures.uniqueQueue("idem-free");
        long first = enqueue(queue, "{\"type\": \"noop\", \"idempotencyKey\": \"k\"}");
        finish(first, "succeeded");
        api().delete().uri("/api/v1/tasks/" + first).exchange().expectStatus().isNoContent().expectBody();
        long second = enqueue(queue, "{\"type\": \"noop\", \"idempotencyKey\": \"k\"}");
        assertThat(second).isNotEqualTo(first);
    }

    @Test
    void unknownTaskIs404Problem() {
        api().get().uri("/api/v1/tasks/987654321").exchange()
                .expectStatus().isNotFound()
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.status").isEqualTo(404)
                .jsonPath("$.title").isNotEmpty()
                .jsonPath("$.detail").isNotEmpty();
        api().get().uri("/api/v1/tasks/not-a-number").exchange().expectStatus().isNotFound().expectBody();
        api().get().uri("/api/v1/tasks/99999999999999999999999").exchange().expectStatus().isNotFound().expectBody();
    }

    @Test
    void listIsNewestFirstAndPagesWithTheNextCursor() {
        String queue = TaskFixtures.uniqueQueue("list");
        long[] ids = new long[5];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = enqueue(queue, "{\"type\": \"noop\"}");
        }
        Page first = page("/api/v1/tasks?queue=" + queue + "&limit=2");
        assertThat(first.ids()).containsExactly(ids[4], ids[3]);
        assertThat(first.next()).isNotNull();
        Page second = page("/api/v1/tasks?queue=" + queue + "&limit=2&before=" + first.next());
        assertThat(second.ids()).containsExactly(ids[2], ids[1]);
        Page last = page("/api/v1/tasks?queue=" + queue + "&limit=2&before=" + second.next());
        assertThat(last.ids()).containsExactly(ids[0]);
        assertThat(last.next()).isNull();
    }

    @Test
    void aPageOfLargeTasksEndsAtAboutFourMebibytesAndTheCursorGoesOnFromThere() {
        String queue = TaskFixtures.uniqueQueue("list-bytes");
        String task = "{\"type\": \"t\", \"payload\": {\"blob\": \"" + "p".repeat(200 * 1024) + "\"}}";
        api().post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"tasks\": [" + String.join(",", java.util.Collections.nCopies(30, task)) + "]}")
                .exchange().expectStatus().isCreated().expectBody();
        Page first = page("/api/v1/tasks?queue=" + queue + "&limit=500");
        assertThat(first.ids()).hasSizeBetween(15, 21); // 4 MiB of 200 KiB payloads
        assertThat(first.next()).isNotNull();
        Page rest = page("/api/v1/tasks?queue=" + queue + "&limit=500&before=" + first.next());
        assertThat(rest.next()).isNull();
        List<Long> all = new java.util.ArrayList<>(first.ids());
        all.addAll(rest.ids());
        assertThat(all).hasSize(30).doesNotHaveDuplicates().isSortedAccordingTo(java.util.Comparator.reverseOrder());
    }

    @Test
    void listFiltersByStateAndType() throws SQLException {
        String queue = TaskFixtures.uniqueQueue("filter");
        long noop = enqueue(queue, "{\"type\": \"noop\"}");
        long sleep = enqueue(queue, "{\"type\": \"sleep\"}");
        long done = enqueue(queue, "{\"type\": \"sleep\"}");
        finish(done, "failed");
        assertThat(page("/api/v1/tasks?queue=" + queue + "&type=sleep").ids())
                .containsExactly(done, sleep);
        assertThat(page("/api/v1/tasks?queue=" + queue + "&state=queued").ids())
                .containsExactly(sleep, noop);
        assertThat(page("/api/v1/tasks?queue=" + queue + "&state=failed&type=sleep").ids())
                .containsExactly(done);
    }

    @Test
    void listRejectsALimitOutside1To500AndUnknownStatesAndForeignCursors() {
        for (String query : List.of("limit=0", "limit=501", "limit=-3", "state=done", "before=bm90LWEtY3Vyc29y",
                "before=%%%")) {
            api().get().uri("/api/v1/tasks?" + query).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].field").isNotEmpty();
        }
        api().get().uri("/api/v1/tasks?limit=500").exchange().expectStatus().isOk().expectBody();
    }

    @Test
    void deletingATerminalTaskAnswers204AndRemovesItButLeavesItsEventsToRetention() throws SQLException {
        long id = enqueue(TaskFixtures.uniqueQueue("delete"), "{\"type\": \"noop\"}");
        finish(id, "cancelled");
        api().delete().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNoContent().expectBody();
        api().get().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNotFound().expectBody();
        api().get().uri("/api/v1/tasks/" + id + "/events").exchange().expectStatus().isNotFound().expectBody();
        assertThat(query("SELECT name FROM task_event WHERE task_id = ? ORDER BY id", id)).containsExactly("queued");
        assertThat(query("SELECT task_id::text FROM task_tombstone WHERE task_id = ?", id)).containsExactly(
                Long.toString(id));
        api().delete().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNotFound().expectBody();
    }

    @Test
    void deletingATaskThatIsNotTerminalIs409WithItsState() {
        long id = enqueue(TaskFixtures.uniqueQueue("delete-live"), "{\"type\": \"noop\"}");
        api().delete().uri("/api/v1/tasks/" + id).exchange()
                .expectStatus().isEqualTo(409)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.state").isEqualTo("queued");
        api().get().uri("/api/v1/tasks/" + id).exchange().expectStatus().isOk().expectBody();
    }

    @Test
    void aPayloadOver256KiBIs413() {
        String big = "{\"type\": \"noop\", \"payload\": {\"s\": \"" + "a".repeat(300 * 1024) + "\"}}";
        post("/api/v1/queues/" + TaskFixtures.uniqueQueue("big") + "/tasks", big)
                .expectStatus().isEqualTo(413)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.detail").isNotEmpty();
    }

    @Test
    void aRequestOverTheRequestLimitIs413() {
        String item = "{\"type\": \"noop\", \"payload\": \"" + "b".repeat(200 * 1024) + "\"}";
        String body = "{\"tasks\": [" + String.join(",", java.util.Collections.nCopies(85, item)) + "]}";
        // Its own connection: the server closes it, having answered before reading the whole body.
        WebTestClient.bindToServer(new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection())))
                .baseUrl("http://127.0.0.1:" + port).responseTimeout(java.time.Duration.ofSeconds(30)).build()
                .post().uri("/api/v1/queues/" + TaskFixtures.uniqueQueue("huge") + "/tasks/batch")
                .header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isEqualTo(413)
                .expectHeader().valueEquals(HttpHeaders.CONNECTION, "close")
                .expectBody().jsonPath("$.status").isEqualTo(413);
    }

    @Test
    void aBodyThatIsNotJsonIs400() {
        for (String body : List.of("{not json", "", "[1, 2]", "\"text\"", "null", "{\"type\": \"noop\"} trailing")) {
            post("/api/v1/queues/q/tasks", body)
                    .expectStatus().isBadRequest()
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.status").isEqualTo(400).jsonPath("$.detail").isNotEmpty();
        }
    }

    @Test
    void aBodyThatIsNotJsonSaysWhereAndWhy() {
        post("/api/v1/queues/q/tasks", "{\"type\": \"noop\",\n  \"priority\": }")
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.title").isEqualTo("Malformed request")
                .jsonPath("$.detail").value(detail -> assertThat((String) detail)
                        .startsWith("The body is not valid JSON (line 2, column 15): Unexpected character ('}'"));
        post("/api/v1/queues/q/tasks", "{\"type\": \"noop\"")
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.detail").value(detail -> assertThat((String) detail)
                        .startsWith("The body is not valid JSON").contains("end-of-input").doesNotContain("Source"));
        post("/api/v1/queues/q/tasks", "{\"type\": \"noop\", \"payload\": " + "[".repeat(600) + "]".repeat(600) + "}")
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.detail").value(detail -> assertThat((String) detail).contains("nesting depth"));
        api().post().uri("/api/v1/queues/q/tasks").contentType(MediaType.APPLICATION_JSON).exchange()
                .expectStatus().isBadRequest()
                .expectBody().jsonPath("$.detail").isEqualTo("The body is empty; this call takes a JSON object");
    }

    @Test
    void aFieldOfTheWrongJsonTypeIs400NamingIt() {
        post("/api/v1/queues/q/tasks", "{\"type\": 12}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.errors[0].field").isEqualTo("type");
        post("/api/v1/queues/q/tasks", "{\"type\": \"noop\", \"priority\": \"high\"}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.errors[0].field").isEqualTo("priority");
        post("/api/v1/queues/q/tasks", "{\"type\": \"noop\", \"runAt\": 5}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.errors[0].field").isEqualTo("runAt");
    }

    @Test
    void aMissingTypeIs422NamingTheField() {
        post("/api/v1/queues/q/tasks", "{\"payload\": {}}")
                .expectStatus().isEqualTo(422)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.status").isEqualTo(422)
                .jsonPath("$.title").isNotEmpty()
                .jsonPath("$.detail").isNotEmpty()
                .jsonPath("$.errors[0].field").isEqualTo("type")
                .jsonPath("$.errors[0].message").isNotEmpty();
    }

    @Test
    void valuesOutsideTheContractAre422() {
        for (String body : List.of(
                "{\"type\": \"has space\"}",
                "{\"type\": \"" + "t".repeat(129) + "\"}",
                "{\"type\": \"noop\", \"priority\": 101}",
                "{\"type\": \"noop\", \"priority\": 1.5}",
                "{\"type\": \"noop\", \"maxAttempts\": 0}",
                "{\"type\": \"noop\", \"maxAttempts\": 101}",
                "{\"type\": \"noop\", \"idempotencyKey\": \"\"}",
                "{\"type\": \"noop\", \"idempotencyKey\": \"" + "k".repeat(201) + "\"}",
                "{\"type\": \"noop\", \"runAt\": \"tomorrow\"}",
                "{\"type\": \"noop\", \"runAt\": \"2030-01-01T00:00:00Z\", \"delaySeconds\": 5}",
                "{\"type\": \"noop\", \"delaySeconds\": -1}",
                "{\"type\": \"noop\", \"delaySeconds\": 1e400}",
                "{\"type\": \"noop\", \"payload\": {\"a\": \"nul\\u0000\"}}")) {
            post("/api/v1/queues/q/tasks", body).expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].field").isNotEmpty();
        }
    }

    @Test
    void aRunAtOutsideYears1To9999Is422NamingItAndTheLastMicrosecondOfTheYear9999IsTaken() {
        for (String beyond : List.of("+999999999-12-31T23:59:59Z", "+10000-01-01T00:00:00Z", "9999-12-31T23:30:00-01:00",
                "0000-12-31T23:59:59.999999Z", "-000001-06-01T00:00:00Z")) {
            post("/api/v1/queues/q/tasks", "{\"type\": \"noop\", \"runAt\": \"" + beyond + "\"}")
                    .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("runAt");
            post("/api/v1/queues/q/tasks/batch", "{\"tasks\": [{\"type\": \"noop\"}, {\"type\": \"noop\", \"runAt\": \""
                    + beyond + "\"}]}").expectStatus().isEqualTo(422).expectBody()
                    .jsonPath("$.errors[0].field").isEqualTo("tasks[1].runAt");
        }
        String queue = TaskFixtures.uniqueQueue("dates");
        post("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"noop\", \"runAt\": \"9999-12-31T23:59:59.999999Z\"}")
                .expectStatus().isCreated().expectBody().jsonPath("$.runAt").isEqualTo("9999-12-31T23:59:59.999999Z");
    }

    @Test
    void anInvalidQueueNameIs422() {
        post("/api/v1/queues/.hidden/tasks", "{\"type\": \"noop\"}")
                .expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].field").isEqualTo("queue");
        post("/api/v1/queues/" + "q".repeat(65) + "/tasks", "{\"type\": \"noop\"}").expectStatus().isEqualTo(422).expectBody();
    }

    @Test
    void aBodyThatIsNotJsonContentIs415() {
        api().post().uri("/api/v1/queues/q/tasks").contentType(MediaType.TEXT_PLAIN).bodyValue("{\"type\": \"noop\"}")
                .exchange()
                .expectStatus().isEqualTo(415)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.detail").isNotEmpty();
    }

    private WebTestClient.ResponseSpec post(String uri, String json) {
        return api().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange();
    }

    private long enqueue(String queue, String json) {
        return post("/api/v1/queues/" + queue + "/tasks", json).expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("id").longValue();
    }

    /** The ids and the cursor of one page of the task list. */
    record Page(List<Long> ids, String next) {
    }

    private Page page(String uri) {
        JsonNode body = api().get().uri(uri).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        List<Long> ids = new java.util.ArrayList<>();
        body.get("tasks").forEach(task -> ids.add(task.get("id").longValue()));
        return new Page(ids, body.get("next").isNull() ? null : body.get("next").stringValue());
    }

    /** Stands in for the workers, which this context does not run. */
    static void finish(long id, String state) throws SQLException {
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement statement = connection.prepareStatement(
                     "UPDATE task SET state = ?, finished_at = now() WHERE id = ?")) {
            statement.setString(1, state);
            statement.setLong(2, id);
            statement.executeUpdate();
        }
        TaskRows.follow(id);
    }

    static List<String> query(String sql, long id) throws SQLException {
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setLong(1, id);
            try (ResultSet rows = statement.executeQuery()) {
                java.util.ArrayList<String> values = new java.util.ArrayList<>();
                while (rows.next()) {
                    values.add(rows.getString(1));
                }
                return values;
            }
        }
    }
}
