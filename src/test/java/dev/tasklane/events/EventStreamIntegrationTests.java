package dev.tasklane.events;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.tasklane.queue.TaskStore;
import dev.tasklane.testsupport.EventRows;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.SseSockets;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

final class EventStreamIntegrationTests extends WorkerIntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration PATIENT = Duration.ofSeconds(20);

    @LocalServerPort
    private int port;
    @Autowired
    private TaskStore store;
    private SseClient sse;
    private Tasks tasks;

    @BeforeEach
    void setUp() {
        sse = new SseClient(port);
        tasks = new Tasks(api());
    }

    @Test
    void aTasksStreamShowsItsWholeLifeAndEndsWhenItIsDone() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 1000, \"steps\": 10}}")
                .get("id").longValue();
        List<SseClient.Event> events = sse.events("/api/v1/tasks/" + id + "/events", null).collectList().block(PATIENT);
        List<String> names = events.stream().map(SseClient.Event::event).toList();
        List<String> expected = new ArrayList<>(List.of("queued", "running"));
        for (int i = 0; i < 10; i++) {
            expected.add("progress");
        }
        expected.add("succeeded");
        assertThat(names).isEqualTo(expected);
        List<Integer> percents = events.stream().filter(e -> e.event().equals("progress"))
                .map(e -> data(e).get("percent").intValue()).toList();
        assertThat(percents).containsExactly(10, 20, 30, 40, 50, 60, 70, 80, 90, 100);
        assertContract(events, id);
        JsonNode succeeded = data(events.get(events.size() - 1));
        assertThat(succeeded.get("result").get("sleptMs").intValue()).isEqualTo(1000);
        assertThat(data(events.get(1)).get("workerId").stringValue()).isNotEmpty();
        assertThat(data(events.get(0)).has("runAt")).isTrue();
        assertThat(data(events.get(2)).get("message").stringValue()).isEqualTo("step 1/10");
    }

    @Test
    void aFinishedTasksStreamReplaysItsHistoryThenEnds() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        tasks.awaitState(id, "succeeded", PATIENT);
        List<SseClient.Event> events = sse.events("/api/v1/tasks/" + id + "/events", null).collectList().block(PATIENT);
        assertThat(events).extracting(SseClient.Event::event).containsExactly("queued", "running", "succeeded");
        assertThat(sse.status("/api/v1/tasks/" + id + "/events", events.get(2).id())).isEqualTo(204);
    }

    @Test
    void resumingWithLastEventIdSendsTheRestExactlyOnce() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 1500, \"steps\": 6}}")
                .get("id").longValue();
        List<SseClient.Event> first = SseClient.take(sse.events("/api/v1/tasks/" + id + "/events", null), 3, PATIENT);
        List<SseClient.Event> rest = sse.events("/api/v1/tasks/" + id + "/events", first.get(2).id())
                .collectList().block(PATIENT);
        List<SseClient.Event> all = new ArrayList<>(first);
        all.addAll(rest);
        assertThat(all).extracting(SseClient.Event::event)
                .containsExactly("queued", "running", "progress", "progress", "progress", "progress", "progress",
                        "progress", "succeeded");
        assertContract(all, id);
        // the query parameter does what the header does
        List<SseClient.Event> viaParameter = sse.events("/api/v1/tasks/" + id + "/events?lastEventId=" + first.get(0).id(),
                null).collectList().block(PATIENT);
        assertThat(viaParameter).hasSize(all.size() - 1);
    }

    @Test
    void aDeletedTasksEventsStillReachAStreamThatResumesBeforeThem() {
        String queue = TaskFixtures.uniqueQueue("deleted");
        String cursor = Sql.column("SELECT coalesce(max(id), 0)::text FROM task_event").get(0);
        long id = tasks.enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        api().delete().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNoContent().expectBody();

        assertThat(sse.status("/api/v1/tasks/" + id + "/events", null)).isEqualTo(404);
        List<SseClient.Event> resumed = SseClient.take(sse.events("/api/v1/events?queue=" + queue, cursor), 2, PATIENT);
        assertThat(resumed).extracting(SseClient.Event::event).containsExactly("queued", "cancelled");
        assertThat(resumed).allSatisfy(event -> assertThat(data(event).get("taskId").longValue()).isEqualTo(id));
    }

    @Test
    void theStreamsRefuseUnknownTasksAndBadCursors() {
        assertThat(sse.status("/api/v1/tasks/987654321/events", null)).isEqualTo(404);
        assertThat(sse.status("/api/v1/tasks/1/events", "abc")).isEqualTo(400);
        assertThat(sse.status("/api/v1/events?lastEventId=x1", null)).isEqualTo(400);
        assertThat(sse.status("/api/v1/events?events=exploded", null)).isEqualTo(422);
        api().get().uri("/api/v1/events?events=queued,exploded").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.detail")
                .isEqualTo("events: must be event names from [queued, running, progress, succeeded, failed, cancelled]");
    }

    /**
     * HEAD answers what GET would, headers only, at once: a HEAD that opened the stream and
     * waited for its end would never be answered (found by the request fuzzer).
     */
    @Test
    void aHeadRequestOnAStreamGetsItsHeadersAtOnceAndNoStream() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader("Authorization", "Bearer " + TOKEN).build();
        for (String path : List.of("/api/v1/events", "/api/v1/events?queue=wk-basic", "/api/v1/tasks/" + id + "/events")) {
            ResponseEntity<Void> head = client.head().uri(path).accept(MediaType.TEXT_EVENT_STREAM).retrieve()
                    .toBodilessEntity().block(Duration.ofSeconds(5));
            assertThat(head.getStatusCode().value()).as(path).isEqualTo(200);
            assertThat(head.getHeaders().getContentType()).as(path).isEqualTo(MediaType.TEXT_EVENT_STREAM);
        }
        int unknown = client.head().uri("/api/v1/tasks/987654321/events")
                .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value())).block(Duration.ofSeconds(5));
        assertThat(unknown).isEqualTo(404);
    }

    @Test
    void theEventStreamsTakeTheTokenAsAQueryParameter() throws Exception {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        tasks.awaitState(id, "succeeded", PATIENT);
        WebClient anonymous = WebClient.create("http://127.0.0.1:" + port);
        int withToken = anonymous.get().uri("/api/v1/tasks/" + id + "/events?access_token=" + TOKEN)
                .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value())).block(PATIENT);
        int without = anonymous.get().uri("/api/v1/tasks/" + id + "/events")
                .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value())).block(PATIENT);
        assertThat(withToken).isEqualTo(200);
        assertThat(without).isEqualTo(401);
        assertThat(SseSockets.statusLine(port, "/api/v1/events?access_token=" + TOKEN, PATIENT)).as("the all-events stream")
                .startsWith("HTTP/1.1 200");
        assertThat(SseSockets.statusLine(port, "/api/v1/events", PATIENT)).startsWith("HTTP/1.1 401");
    }

    @Test
    void theAllEventsStreamFiltersByQueueAndEventName() {
        String queue = TaskFixtures.uniqueQueue("filtered");
        List<SseClient.Event> received = new CopyOnWriteArrayList<>();
        CountDownLatch opened = new CountDownLatch(1);
        Disposable subscription = sse.events("/api/v1/events?queue=" + queue + "&events=queued,cancelled", null, opened::countDown)
                .subscribe(received::add);
        try {
            awaitOpened(opened);
            long id = tasks.enqueue(queue, "{\"type\": \"external\"}").get("id").longValue();
            tasks.enqueue("wk-basic", "{\"type\": \"noop\"}");
            tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
            await().atMost(PATIENT).until(() -> received.size() >= 2);
            assertThat(received).extracting(SseClient.Event::event).containsExactly("queued", "cancelled");
            assertThat(received).allSatisfy(e -> assertThat(data(e).get("queue").stringValue()).isEqualTo(queue));
        } finally {
            subscription.dispose();
        }
    }

    @Test
    void eventsCommittedOutOfIdOrderAreDeliveredInIdOrderWithNothingLost() throws Exception {
        HeldBack held = heldBackByAnEventIdInFlight("out-of-order", Connection::commit);
        assertThat(held.received()).extracting(SseClient.Event::id)
                .containsExactly(Long.toString(held.inFlight()), Long.toString(held.later()));
    }

    @Test
    void anEventIdLostToARollbackHoldsLaterEventsBackOnlyUntilThatTransactionEnds() throws Exception {
        HeldBack held = heldBackByAnEventIdInFlight("rolled-back", Connection::rollback);
        assertThat(held.received()).extracting(SseClient.Event::id).containsExactly(Long.toString(held.later()));
    }

    /** What a subscriber got when a later event committed while a smaller id was in flight. */
    private record HeldBack(long inFlight, long later, List<SseClient.Event> received) {
    }

    private interface TransactionEnd {
        void end(Connection connection) throws Exception;
    }

    /**
     * Appends an event in a transaction left open, then a later one that commits at once; checks
     * that the later one is held back, ends the first transaction and waits for the later event.
     */
    private HeldBack heldBackByAnEventIdInFlight(String queuePrefix, TransactionEnd end) throws Exception {
        String queue = TaskFixtures.uniqueQueue(queuePrefix);
        long first = tasks.enqueue(queue, "{\"type\": \"external\"}").get("id").longValue();
        long second = tasks.enqueue(queue, "{\"type\": \"external\"}").get("id").longValue();
        List<SseClient.Event> received = new CopyOnWriteArrayList<>();
        // Only progress: the queued events above may still be on their way to a subscriber from "now".
        CountDownLatch opened = new CountDownLatch(1);
        Disposable subscription = sse.events("/api/v1/events?events=progress&queue=" + queue, null, opened::countDown)
                .subscribe(received::add);
        try {
            awaitOpened(opened);
            try (Connection slow = TestDatabase.get().connect(); Connection fast = TestDatabase.get().connect()) {
                slow.setAutoCommit(false);
                long inFlight = appendProgress(slow, first);   // takes the smaller id, ends last
                long later = appendProgress(fast, second);     // autocommit: visible at once
                assertThat(later).isGreaterThan(inFlight);
                Thread.sleep(1000); // the reader runs several rounds meanwhile
                assertThat(received).as("nothing after an id that is still in flight").isEmpty();
                end.end(slow);
                await().atMost(PATIENT).until(() -> received.stream()
                        .anyMatch(event -> event.id().equals(Long.toString(later))));
                return new HeldBack(inFlight, later, List.copyOf(received));
            }
        } finally {
            subscription.dispose();
        }
    }

    @Test
    void aTransactionThatHoldsNoEventIdDelaysNoEventWhileItStaysOpen() throws Exception {
        String queue = TaskFixtures.uniqueQueue("open-elsewhere");
        long taskId = tasks.enqueue(queue, "{\"type\": \"external\"}").get("id").longValue();
        List<SseClient.Event> received = new CopyOnWriteArrayList<>();
        CountDownLatch opened = new CountDownLatch(1);
        Disposable subscription = sse.events("/api/v1/events?events=progress&queue=" + queue, null, opened::countDown)
                .subscribe(received::add);
        try {
            awaitOpened(opened);
            try (Connection open = TestDatabase.get().connect(); Connection fast = TestDatabase.get().connect()) {
                // First the log settles: what earlier tests (or the other cached contexts) left to prove
                // is delivered before the transaction below opens, which would rightly hold that back.
                long settled = appendProgress(fast, taskId);
                await().atMost(PATIENT).until(() -> !received.isEmpty());
                open.setAutoCommit(false);
                // Owns a transaction id, as a long claim elsewhere or a migration would, but no event id.
                try (PreparedStatement statement = open.prepareStatement("SELECT pg_current_xact_id()")) {
                    statement.executeQuery().close();
                }
                long event = appendProgress(fast, taskId);
                try {
                    await().atMost(Duration.ofSeconds(3)).until(() -> received.size() > 1);
                    // and the next, in a round of its own: the quick proof carries from round to round
                    long next = appendProgress(fast, taskId);
                    await().atMost(Duration.ofSeconds(3)).until(() -> received.size() > 2);
                    assertThat(received).extracting(SseClient.Event::id)
                            .containsExactly(Long.toString(settled), Long.toString(event), Long.toString(next));
                } finally {
                    open.rollback();
                }
            }
        } finally {
            subscription.dispose();
        }
    }

    @Test
    void resumingFromACursorThatRetentionPassedStartsWithAGap() {
        String queue = TaskFixtures.uniqueQueue("gap");
        long pruned = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        long kept = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        long cursor = Long.parseLong(Sql.column("SELECT min(id) - 1 FROM task_event WHERE task_id = ?", pruned).get(0));
        Sql.update("UPDATE task SET state = 'cancelled', finished_at = now() - interval '2 days' WHERE id = ?", pruned);
        TaskRows.follow(pruned);
        EventRows.age(pruned, 2);
        store.pruneOld(Instant.now().minus(Duration.ofDays(1)), cursor, 1).block(PATIENT);
        long prunedThrough = Long.parseLong(Sql.column("SELECT pruned_through FROM event_retention").get(0));

        List<SseClient.Event> events = SseClient.take(
                sse.events("/api/v1/events?queue=" + queue, Long.toString(cursor)), 2, PATIENT);

        assertThat(events.get(0).event()).isEqualTo("gap");
        assertThat(events.get(0).id()).isNull();
        assertThat(data(events.get(0)).get("prunedThrough").longValue()).isEqualTo(prunedThrough).isGreaterThan(cursor);
        assertThat(events.get(1).event()).isEqualTo("queued");
        assertThat(data(events.get(1)).get("taskId").longValue()).isEqualTo(kept);
        List<SseClient.Event> current = SseClient.take(
                sse.events("/api/v1/events?queue=" + queue, Long.toString(prunedThrough)), 1, PATIENT);
        assertThat(current).extracting(SseClient.Event::event).containsExactly("queued");
    }

    @Test
    void webClientsServerSentEventDecoderReadsTheStreamToo() {
        long id = tasks.enqueue("wk-basic", "{\"type\": \"noop\"}").get("id").longValue();
        List<ServerSentEvent<String>> events = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).build()
                .get().uri("/api/v1/tasks/" + id + "/events").retrieve()
                .bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() { })
                .filter(event -> event.event() != null) // the first frame: a comment and a retry hint
                .collectList().block(PATIENT);
        assertThat(events).extracting(ServerSentEvent::event).containsExactly("queued", "running", "succeeded");
        assertThat(events).allSatisfy(e -> assertThat(JSON.readTree(e.data()).get("eventId").asString()).isEqualTo(e.id()));
    }

    /** Every frame as the contract has it: id equals data.eventId, ids rise, the data names the task. */
    private static void assertContract(List<SseClient.Event> events, long taskId) {
        long previous = 0;
        for (SseClient.Event event : events) {
            JsonNode data = data(event);
            assertThat(event.id()).isEqualTo(Long.toString(data.get("eventId").longValue()));
            assertThat(data.get("eventId").longValue()).isGreaterThan(previous);
            previous = data.get("eventId").longValue();
            assertThat(data.get("taskId").longValue()).isEqualTo(taskId);
            for (String field : List.of("queue", "type", "state", "attempt", "at")) {
                assertThat(data.has(field)).as(field).isTrue();
            }
        }
    }

    private static JsonNode data(SseClient.Event event) {
        return JSON.readTree(event.data());
    }

    /** What a task transition does in one statement (see {@link EventRows}). */
    private static long appendProgress(Connection connection, long taskId) throws Exception {
        return EventRows.appendProgress(connection, taskId);
    }

    /** Waits for the stream's headers: from then on every event is in it. */
    private static void awaitOpened(CountDownLatch opened) {
        try {
            assertThat(opened.await(10, TimeUnit.SECONDS)).as("the stream's headers arrived").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
