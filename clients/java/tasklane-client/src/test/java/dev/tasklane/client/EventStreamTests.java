package dev.tasklane.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import com.sun.net.httpserver.HttpServer;
import dev.tasklane.client.testing.TasklaneService;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The reconnecting event streams: every event once across restarts, and gaps passed on. */
final class EventStreamTests {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @Test
    void aSubscriberSeesEveryEventOnceAcrossAServiceRestart() throws Exception {
        try (TasklaneService service = TasklaneService.start(Map.of())) {
            TasklaneClient client = TasklaneClient.builder(service.baseUrl()).token(TasklaneService.TOKEN)
                    .reconnectDelay(Duration.ofMillis(100)).build();
            List<TaskEvent> seen = new CopyOnWriteArrayList<>();
            Disposable subscription = client.events("default", List.of(), null).subscribe(seen::add);
            try {
                Thread.sleep(1000); // the live stream starts from its connection: let it connect
                List<Long> ids = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    ids.add(client.enqueue("default", NewTask.of("noop")).block(PATIENCE).id());
                }
                await().atMost(PATIENCE).until(() -> seen.size() >= 9);

                service.restart();
                for (int i = 0; i < 3; i++) {
                    ids.add(client.enqueue("default", NewTask.of("noop")).block(PATIENCE).id());
                }
                await().atMost(PATIENCE).until(() -> seen.size() >= 18);
                Thread.sleep(500); // nothing more may come

                assertThat(seen).hasSize(18);
                List<Long> eventIds = seen.stream().map(TaskEvent::id).toList();
                assertThat(eventIds).doesNotHaveDuplicates().isSorted();
                Map<Long, List<String>> byTask = seen.stream().collect(Collectors.groupingBy(TaskEvent::taskId,
                        Collectors.mapping(TaskEvent::name, Collectors.toList())));
                assertThat(byTask.keySet()).containsExactlyInAnyOrderElementsOf(ids);
                assertThat(byTask.values()).allSatisfy(names -> assertThat(names).containsExactly("queued", "running", "succeeded"));
            } finally {
                subscription.dispose();
            }
        }
    }

    @Test
    void aGapIsPassedOnAndTheStreamResumesAfterTheLastRealEvent() throws Exception {
        List<String> lastEventIds = new CopyOnWriteArrayList<>();
        HttpServer server = eventServer(lastEventIds, (lastEventId, out) -> write(out, lastEventId == null
                ? ": connected\n\nid: 7\nevent: queued\ndata: {\"eventId\":7,\"taskId\":1}\n\n"
                        + "event: gap\ndata: {\"prunedThrough\":20}\n\n"
                : "id: 21\nevent: running\ndata: {\"eventId\":21,\"taskId\":2}\n\n")); // then the connection ends
        try {
            List<TaskEvent> events = client(server).events(null, List.of(), null).take(3).collectList().block(PATIENCE);

            assertThat(events).extracting(TaskEvent::name).containsExactly("queued", "gap", "running");
            assertThat(events.get(1).id()).isNull();
            assertThat(events.get(1).isGap()).isTrue();
            assertThat(events.get(1).data().get("prunedThrough").longValue()).isEqualTo(20);
            assertThat(lastEventIds).startsWith("null", "7");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aStreamThatFallsSilentWithoutClosingIsReconnectedFromItsLastEvent() throws Exception {
        List<String> lastEventIds = new CopyOnWriteArrayList<>();
        CountDownLatch released = new CountDownLatch(1);
        HttpServer server = eventServer(lastEventIds, (lastEventId, out) -> {
            if (lastEventId == null) {
                write(out, "id: 7\nevent: queued\ndata: {\"eventId\":7,\"taskId\":1}\n\n");
                released.await(); // silent from here on, the connection left open
            } else {
                write(out, "id: 8\nevent: running\ndata: {\"eventId\":8,\"taskId\":1}\n\n");
            }
        });
        try {
            List<TaskEvent> events = client(server).events(null, List.of(), null).take(2).collectList().block(PATIENCE);

            assertThat(events).extracting(TaskEvent::id).containsExactly(7L, 8L);
            assertThat(lastEventIds).startsWith("null", "7");
        } finally {
            released.countDown();
            server.stop(0);
        }
    }

    @Test
    void aConnectionThatNeverAnswersIsGivenUpAndTheStreamConnectsAgain() throws Exception {
        List<String> lastEventIds = new CopyOnWriteArrayList<>();
        CountDownLatch released = new CountDownLatch(1);
        HttpServer server = eventServer(lastEventIds, connection -> {
            if (connection == 1) {
                released.await(); // not even the headers: the request hangs, the connection left open
            }
        }, (lastEventId, out) -> write(out, "id: 7\nevent: queued\ndata: {\"eventId\":7,\"taskId\":1}\n\n"));
        try {
            List<TaskEvent> events = client(server).events(null, List.of(), null).take(1).collectList().block(PATIENCE);

            assertThat(events).extracting(TaskEvent::id).containsExactly(7L);
            assertThat(lastEventIds).hasSizeGreaterThanOrEqualTo(2);
        } finally {
            released.countDown();
            server.stop(0);
        }
    }

    @Test
    void aStreamKeptAliveByCommentsIsNotReconnected() throws Exception {
        List<String> lastEventIds = new CopyOnWriteArrayList<>();
        CountDownLatch released = new CountDownLatch(1);
        HttpServer server = eventServer(lastEventIds, (lastEventId, out) -> {
            write(out, "id: 7\nevent: queued\ndata: {\"eventId\":7,\"taskId\":1}\n\n");
            while (!released.await(150, TimeUnit.MILLISECONDS)) {
                write(out, ": keep-alive\n\n");
            }
        });
        List<TaskEvent> seen = new CopyOnWriteArrayList<>();
        Disposable subscription = client(server).events(null, List.of(), null).subscribe(seen::add);
        try {
            Thread.sleep(2500); // five idle timeouts' worth of comments only

            assertThat(seen).extracting(TaskEvent::id).containsExactly(7L);
            assertThat(lastEventIds).containsExactly("null");
        } finally {
            subscription.dispose();
            released.countDown();
            server.stop(0);
        }
    }

    /** What a stand-in for the service does before it answers a connection, given the connection's number. */
    @FunctionalInterface
    private interface BeforeHeaders {
        void await(int connection) throws InterruptedException;
    }

    /** What a stand-in for the service writes on one connection, given its Last-Event-ID. */
    @FunctionalInterface
    private interface StreamBody {
        void write(String lastEventId, OutputStream out) throws IOException, InterruptedException;
    }

    /** A stand-in for the service's event stream; records each connection's Last-Event-ID ("null" for none). */
    private static HttpServer eventServer(List<String> lastEventIds, StreamBody body) throws IOException {
        return eventServer(lastEventIds, connection -> { }, body);
    }

    /** The same, calling {@code beforeHeaders} with each connection's number (from 1) before it answers. */
    private static HttpServer eventServer(List<String> lastEventIds, BeforeHeaders beforeHeaders, StreamBody body)
            throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        AtomicInteger connections = new AtomicInteger();
        server.createContext("/api/v1/events", exchange -> {
            String lastEventId = exchange.getRequestHeaders().getFirst("Last-Event-ID");
            lastEventIds.add(String.valueOf(lastEventId));
            try {
                beforeHeaders.await(connections.incrementAndGet());
                exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
                exchange.sendResponseHeaders(200, 0);
                try (OutputStream out = exchange.getResponseBody()) {
                    body.write(lastEventId, out);
                }
            } catch (IOException | InterruptedException gone) {
                // the client went away, or the test ended
            }
        });
        server.start();
        return server;
    }

    private static TasklaneClient client(HttpServer server) {
        return TasklaneClient.builder("http://127.0.0.1:" + server.getAddress().getPort())
                .reconnectDelay(Duration.ofMillis(50)).streamIdleTimeout(Duration.ofMillis(500)).build();
    }

    private static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
