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
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v1/events", exchange -> {
            String lastEventId = exchange.getRequestHeaders().getFirst("Last-Event-ID");
            lastEventIds.add(String.valueOf(lastEventId));
            String body = lastEventId == null
                    ? ": connected\n\nid: 7\nevent: queued\ndata: {\"eventId\":7,\"taskId\":1}\n\n"
                            + "event: gap\ndata: {\"prunedThrough\":20}\n\n"
                    : "id: 21\nevent: running\ndata: {\"eventId\":21,\"taskId\":2}\n\n";
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body.getBytes(StandardCharsets.UTF_8)); // then the connection ends
            } catch (IOException gone) {
                // the client went away
            }
        });
        server.start();
        try {
            TasklaneClient client = TasklaneClient.builder("http://127.0.0.1:" + server.getAddress().getPort())
                    .reconnectDelay(Duration.ofMillis(50)).build();
            List<TaskEvent> events = client.events(null, List.of(), null).take(3).collectList().block(PATIENCE);

            assertThat(events).extracting(TaskEvent::name).containsExactly("queued", "gap", "running");
            assertThat(events.get(1).id()).isNull();
            assertThat(events.get(1).isGap()).isTrue();
            assertThat(events.get(1).data().get("prunedThrough").longValue()).isEqualTo(20);
            assertThat(lastEventIds).startsWith("null", "7");
        } finally {
            server.stop(0);
        }
    }
}
