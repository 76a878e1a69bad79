package dev.tasklane.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reads a {@code text/event-stream} the way a browser's EventSource does: raw bytes, split into
 * events at blank lines, {@code id:}, {@code event:} and {@code data:} fields with one optional
 * space after the colon, comment lines starting with a colon.
 */
public final class SseClient {

    /**
     * One parsed event.
     *
     * @param id the id field, or null when the event has none
     * @param event the event name ("message" when absent)
     * @param data the data lines joined by newlines
     */
    public record Event(String id, String event, String data) {
    }

    /** What came back: the status and, for 200, the events until the server closed the stream. */
    public record Response(int status, Flux<Event> events) {
    }

    private final WebClient client;
    private final WebClient unpooled;

    public SseClient(int port) {
        this(port, IntegrationTest.TOKEN);
    }

    public SseClient(int port, String token) {
        this.client = WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + token).build();
        // A connection of its own per status check: a stream's connection is never reused by it.
        this.unpooled = client.mutate().clientConnector(new ReactorClientHttpConnector(
                HttpClient.create(ConnectionProvider.newConnection()))).build();
    }

    /** Opens the stream; {@code lastEventId} goes in the Last-Event-ID header when not null. */
    public Flux<Event> events(String uri, String lastEventId) {
        return events(uri, lastEventId, () -> { });
    }

    /**
     * Opens the stream and runs {@code opened} when its response headers arrive: from then on the
     * contract includes every event in the stream.
     */
    public Flux<Event> events(String uri, String lastEventId, Runnable opened) {
        return client.get().uri(uri).header(HttpHeaders.ACCEPT, "text/event-stream")
                .headers(h -> {
                    if (lastEventId != null) {
                        h.set("Last-Event-ID", lastEventId);
                    }
                })
                .exchangeToFlux(response -> {
                    if (response.statusCode().isError()) {
                        return response.createException().flatMapMany(Flux::error);
                    }
                    opened.run();
                    return response.bodyToFlux(DataBuffer.class);
                })
                .map(buffer -> {
                    String text = buffer.toString(StandardCharsets.UTF_8);
                    DataBufferUtils.release(buffer);
                    return text;
                })
                .transform(SseClient::parse);
    }

    /** The status of a request to a stream, without reading it. */
    public int status(String uri, String lastEventId) {
        return unpooled.get().uri(uri).headers(h -> {
                    if (lastEventId != null) {
                        h.set("Last-Event-ID", lastEventId);
                    }
                })
                .exchangeToMono(response -> response.releaseBody().thenReturn(response.statusCode().value()))
                .block(Duration.ofSeconds(10));
    }

    static Flux<Event> parse(Flux<String> chunks) {
        return Flux.defer(() -> {
            StringBuilder pending = new StringBuilder();
            return chunks.concatMapIterable(chunk -> {
                pending.append(chunk.replace("\r\n", "\n"));
                List<Event> events = new ArrayList<>();
                for (int end; (end = pending.indexOf("\n\n")) >= 0; ) {
                    String block = pending.substring(0, end);
                    pending.delete(0, end + 2);
                    Event event = parseBlock(block);
                    if (event != null) {
                        events.add(event);
                    }
                }
                return events;
            });
        });
    }

    private static Event parseBlock(String block) {
        String id = null;
        String name = "message";
        List<String> data = new ArrayList<>();
        for (String line : block.split("\n", -1)) {
            if (line.isEmpty() || line.startsWith(":")) {
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (field) {
                case "id" -> id = value;
                case "event" -> name = value;
                case "data" -> data.add(value);
                default -> { }
            }
        }
        return data.isEmpty() ? null : new Event(id, name, String.join("\n", data));
    }

    /** Collects events until the stream ends or {@code count} arrived. */
    public static List<Event> take(Flux<Event> events, int count, Duration patience) {
        return events.take(count).collectList().block(patience);
    }

    public static Mono<List<Event>> until(Flux<Event> events, java.util.function.Predicate<Event> last) {
        return events.takeUntil(last).collectList();
    }
}
