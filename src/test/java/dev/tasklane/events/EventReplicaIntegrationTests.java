package dev.tasklane.events;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.SseSockets;
import dev.tasklane.testsupport.EventRows;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.Disposable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Event streams across whole replicas: fan-out between them, slow subscribers, a database outage. */
final class EventReplicaIntegrationTests {

    private static final int STALLED = 20;

    @Test
    void aFreshReplicaWhoseReaderIsHeldBackOpensItsStreamsAtOnceAndSendsWhatCommitsAfterwards() throws Exception {
        String queue = TaskFixtures.uniqueQueue("held-back");
        // An event id taken by a transaction that stays open: only the proof by xmin can close the
        // hole, so a replica started now cannot establish its reader's horizon until it commits.
        try (Connection hole = TestDatabase.get().connect()) {
            hole.setAutoCommit(false);
            hole.createStatement().execute("SELECT pg_current_xact_id(), nextval('task_event_batch_seq')");
            try (ConfigurableApplicationContext replica = Replicas.start("", Map.of())) {
                SseClient sse = new SseClient(Replicas.port(replica));
                List<SseClient.Event> all = new CopyOnWriteArrayList<>();
                java.util.concurrent.CountDownLatch opened = new java.util.concurrent.CountDownLatch(1);
                Disposable subscription = sse.events("/api/v1/events?queue=" + queue, null, opened::countDown)
                        .subscribe(all::add);
                try {
                    assertThat(opened.await(2, java.util.concurrent.TimeUnit.SECONDS)).as("headers while held back").isTrue();
                    long id = new Tasks(client(replica)).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
                    java.util.concurrent.CountDownLatch taskOpened = new java.util.concurrent.CountDownLatch(1);
                    Disposable ofTask = sse.events("/api/v1/tasks/" + id + "/events", null, taskOpened::countDown).subscribe();
                    assertThat(taskOpened.await(2, java.util.concurrent.TimeUnit.SECONDS)).as("task stream headers").isTrue();
                    ofTask.dispose();

                    hole.commit();
                    await().atMost(Duration.ofSeconds(10)).until(() -> !all.isEmpty());
                    assertThat(all.get(0).event()).isEqualTo("queued");
                    assertThat(all.get(0).data()).contains("\"taskId\":" + id + ",");
                } finally {
                    subscription.dispose();
                }
            }
        }
    }

    @Test
    void anEventCausedOnOneReplicaReachesSubscribersOnAnotherWithoutWaitingForAPoll() throws Exception {
        String queue = TaskFixtures.uniqueQueue("fan-out");
        // Polls so slow that only the NOTIFY between replicas can explain a prompt delivery.
        Map<String, String> slowPolls = Map.of("tasklane.events.poll-interval", "30s",
                "tasklane.worker.poll-interval", "30s");
        try (ConfigurableApplicationContext a = Replicas.start(queue + ":2", slowPolls);
             ConfigurableApplicationContext b = Replicas.start("", slowPolls)) {
            SseClient onB = new SseClient(Replicas.port(b));
            List<SseClient.Event> all = new CopyOnWriteArrayList<>();
            Disposable subscription = onB.events("/api/v1/events?queue=" + queue, null).subscribe(all::add);
            try {
                pause();
                Tasks onA = new Tasks(client(a));
                for (int round = 0; round < 3; round++) {
                    int before = all.size();
                    long enqueued = System.nanoTime();
                    long id = onA.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
                    await().atMost(Duration.ofSeconds(10)).until(() -> all.size() >= before + 3);
                    assertThat(Duration.ofNanos(System.nanoTime() - enqueued)).isLessThan(Duration.ofSeconds(2));
                    List<SseClient.Event> ofTask = onB.events("/api/v1/tasks/" + id + "/events", null)
                            .collectList().block(Duration.ofSeconds(20));
                    assertThat(ofTask).extracting(SseClient.Event::event).containsExactly("queued", "running", "succeeded");
                }
                assertThat(all).extracting(SseClient.Event::event).containsExactly("queued", "running", "succeeded",
                        "queued", "running", "succeeded", "queued", "running", "succeeded");

                // Events held back by an older transaction that holds a smaller event id (here of
                // another queue's task) go out as soon as it ends, although no NOTIFY follows that
                // end and the next poll is 30 s away.
                int before = all.size();
                long elsewhere = onA.enqueue(queue + "-elsewhere", "{\"type\": \"external\"}").get("id").longValue();
                try (Connection older = TestDatabase.get().connect()) {
                    older.setAutoCommit(false);
                    EventRows.appendProgress(older, elsewhere);
                    onA.enqueue(queue, "{\"type\": \"noop\"}");
                    await().atMost(Duration.ofSeconds(10)).until(() -> Sql.column(
                            "SELECT count(*) FROM task WHERE queue = ? AND state = 'succeeded'", queue).get(0).equals("4"));
                    assertThat(all).hasSize(before);
                    older.commit();
                }
                long ended = System.nanoTime();
                await().atMost(Duration.ofSeconds(10)).until(() -> all.size() >= before + 3);
                assertThat(Duration.ofNanos(System.nanoTime() - ended)).isLessThan(Duration.ofSeconds(2));
            } finally {
                subscription.dispose();
            }
        }
    }

    @Test
    @Timeout(150) // a burn-down of 5,000 tasks and twenty catch-ups of 15,000 events on a slow machine
    void subscribersThatStopReadingSlowNothingHoldABoundedBufferAndCatchUpFromTheTable() throws Exception {
        String queue = TaskFixtures.uniqueQueue("slow-readers");
        try (ConfigurableApplicationContext replica = Replicas.start(queue + ":32", Map.of())) {
            int port = Replicas.port(replica);
            List<Socket> stalled = new ArrayList<>();
            for (int i = 0; i < STALLED; i++) {
                stalled.add(SseSockets.stalled(port, "/api/v1/events", IntegrationTest.TOKEN));
            }
            // Not copy-on-write: 15,000 adds copying the whole list each time cost seconds of the
            // reader's thread on a slow machine.
            Queue<SseClient.Event> reader = new ConcurrentLinkedQueue<>();
            Disposable subscription = new SseClient(port).events("/api/v1/events?queue=" + queue, null)
                    .subscribe(reader::add);
            try {
                pause();
                long before = Long.parseLong(Sql.column("SELECT coalesce(max(id), 0) FROM task_event").get(0));
                WebTestClient client = client(replica);
                String batch = IntStream.range(0, 1000).mapToObj(i -> "{\"type\": \"noop\", \"payload\": {\"pad\": \""
                        + "x".repeat(200) + "\"}}").collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
                long started = System.nanoTime();
                for (int i = 0; i < 5; i++) {
                    client.post().uri("/api/v1/queues/" + queue + "/tasks/batch").contentType(MediaType.APPLICATION_JSON)
                            .bodyValue(batch).exchange().expectStatus().isCreated().expectBody();
                }
                await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> Sql.column(
                        "SELECT count(*) FROM task WHERE queue = ? AND state = 'succeeded'", queue).get(0).equals("5000"));
                Duration burnDown = Duration.ofNanos(System.nanoTime() - started);
                await("events received by the reader that keeps up").atMost(Duration.ofSeconds(60))
                        .until(reader::size, received -> received >= 15000);

                // The reader that keeps up got everything once, in order, while the others stalled.
                List<Long> ids = reader.stream().map(e -> Long.parseLong(e.id())).toList();
                assertThat(ids).doesNotHaveDuplicates().isSorted().hasSize(15000);
                assertThat(burnDown).isLessThan(Duration.ofSeconds(90));
                MeterRegistry meters = replica.getBean(MeterRegistry.class);
                assertThat(meters.get("tasklane.sse.subscribers").tag("stream", "queue").gauge().value())
                        .isEqualTo(STALLED + 1);

                // Each stalled subscriber was offered every event. What it neither took nor had
                // dropped is what it holds in memory: at most its live buffer's bytes (every frame
                // here is over 200 bytes) and the operators' prefetch in front of the socket.
                List<Long> published = Sql.column("SELECT id FROM task_event WHERE id > ? ORDER BY id", before)
                        .stream().map(Long::parseLong).toList();
                double sentToStalled = meters.get("tasklane.sse.events.sent").counter().count() - 15000;
                double dropped = meters.get("tasklane.sse.live.dropped").counter().count();
                double held = (double) STALLED * published.size() - sentToStalled - dropped;
                assertThat(dropped).as("live events dropped for stalled subscribers").isPositive();
                assertThat(held).as("live events held for %d stalled subscribers", STALLED)
                        .isLessThanOrEqualTo(STALLED * (EventStreams.LIVE_BUFFER_BYTES / 200.0 + 512.0));

                // They all read again, at once: each gets everything, in order, once (from its buffer,
                // then the table). Each stream began at its own subscription, so it may also hold a few
                // earlier events. All at once, because a stream that stopped for good after catching up
                // showed far more often so than with one reader (about one run in ten under load).
                long last = published.get(published.size() - 1);
                ExecutorService readers = Executors.newFixedThreadPool(STALLED);
                try {
                    List<Future<List<Long>>> resumed = new ArrayList<>();
                    for (Socket socket : stalled) {
                        resumed.add(readers.submit(() -> SseSockets.readEventIds(socket, last, Duration.ofSeconds(60))));
                    }
                    for (Future<List<Long>> resumedReader : resumed) {
                        List<Long> received = resumedReader.get();
                        assertThat(received).doesNotHaveDuplicates().isSorted();
                        // isEqualTo, not containsExactlyElementsOf: that one diffs the lists in quadratic
                        // time first, tens of seconds for 15,000 ids on a slow machine.
                        List<Long> resumedIds = received.stream().filter(id -> id > before).toList();
                        assertThat(resumedIds).as(() -> divergence(resumedIds, published, meters)).isEqualTo(published);
                    }
                } finally {
                    readers.shutdownNow();
                }
                assertThat(meters.get("tasklane.sse.catchups").counter().count()).isGreaterThanOrEqualTo(1);
            } finally {
                subscription.dispose();
                for (Socket socket : stalled) {
                    socket.close();
                }
            }
        }
    }

    /**
     * Where a resumed subscriber's ids first part from those published, and what the table and the
     * replica say about it now: enough to tell a replay that read the wrong rows from events that
     * left the table or a stream that skipped.
     */
    private static String divergence(List<Long> received, List<Long> published, MeterRegistry meters) {
        int at = 0;
        while (at < received.size() && at < published.size() && received.get(at).equals(published.get(at))) {
            at++;
        }
        if (at == received.size() && at == published.size()) {
            return "no divergence";
        }
        int from = Math.max(0, at - 3);
        String missingStillInTable = at < published.size() && at < received.size()
                ? Sql.column("SELECT count(*) FROM task_event WHERE id >= ? AND id < ?", published.get(at),
                        received.get(at)).get(0)
                : "-";
        return "first divergence at index " + at + " of " + received.size() + " received / " + published.size()
                + " published; received " + received.subList(from, Math.min(received.size(), at + 3))
                + ", published " + published.subList(from, Math.min(published.size(), at + 3))
                + "; events between still in the table: " + missingStillInTable
                + "; pruned_through " + Sql.column("SELECT pruned_through FROM event_retention").get(0)
                + "; catch-ups " + meters.get("tasklane.sse.catchups").counter().count()
                + "; live dropped " + meters.get("tasklane.sse.live.dropped").counter().count();
    }

    @Test
    void aStreamLosesNothingThroughADatabaseOutage() throws Exception {
        String queue = TaskFixtures.uniqueQueue("outage");
        TestDatabase.Coordinates database = TestDatabase.get();
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port());
             ConfigurableApplicationContext replica = Replicas.startBehind(proxy)) {
            List<SseClient.Event> received = new CopyOnWriteArrayList<>();
            Disposable subscription = new SseClient(Replicas.port(replica)).events("/api/v1/events?queue=" + queue, null)
                    .subscribe(received::add);
            try {
                pause();
                // Writers elsewhere keep appending events while this replica cannot see the database.
                for (int i = 0; i < 3; i++) {
                    Sql.update("INSERT INTO task (queue, type) VALUES (?, 'x')", queue);
                    TaskRows.followQueue(queue);
                    insertQueuedEvents(queue);
                }
                proxy.cut();
                for (int i = 0; i < 3; i++) {
                    Sql.update("INSERT INTO task (queue, type) VALUES (?, 'x')", queue);
                    TaskRows.followQueue(queue);
                    insertQueuedEvents(queue);
                }
                Sql.column("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name ="
                        + " 'tasklane-listener' AND datname = current_database()");
                Thread.sleep(2000); // the outage itself
                proxy.restore();
                for (int i = 0; i < 3; i++) {
                    Sql.update("INSERT INTO task (queue, type) VALUES (?, 'x')", queue);
                    TaskRows.followQueue(queue);
                    insertQueuedEvents(queue);
                }
                List<String> expected = Sql.column("SELECT e.id::text FROM task_event e WHERE e.queue = ? ORDER BY e.id", queue);
                assertThat(expected).hasSize(9);
                await().atMost(Duration.ofSeconds(30)).until(() -> received.size() >= 9);
                assertThat(received).extracting(SseClient.Event::id).containsExactlyElementsOf(expected);
            } finally {
                subscription.dispose();
            }
        }
    }

    /** A task's queued event, written as the service writes it: the task row first. */
    private static void insertQueuedEvents(String queue) {
        Sql.update("""
                WITH xact AS MATERIALIZED (SELECT pg_current_xact_id() AS xid),
                batch AS MATERIALIZED (SELECT nextval('task_event_batch_seq') AS first_id FROM xact),
                t AS (UPDATE task t SET event_previous = t.event_batch, event_batch = batch.first_id
                      FROM batch WHERE t.queue = ? AND t.event_batch IS NULL RETURNING t.*)
                INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types, details, previous)
                SELECT event_batch, queue, count(*), array_agg(id), array_agg(text 'queued'), array_agg(attempt), array_agg(type),
                       array_agg('{"runAt": null, "error": null}'::jsonb), array_agg(event_previous)
                FROM t GROUP BY event_batch, queue""", queue);
    }

    /** Reads event ids off a raw stream until {@code last} arrived. */
    private static void pause() {
        try {
            Thread.sleep(700); // let subscriptions settle over HTTP
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static WebTestClient client(ConfigurableApplicationContext replica) {
        return Replicas.client(replica);
    }
}
