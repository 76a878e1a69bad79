package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import dev.tasklane.events.EventLog;
import dev.tasklane.events.EventStreams;
import dev.tasklane.events.Gap;
import dev.tasklane.events.StreamItem;
import dev.tasklane.events.TaskEvent;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** The two Server-Sent Event streams: one task's events, and every event (optionally filtered). */
@RestController
@RequestMapping("/api/v1")
class EventStreamController {

    private static final Duration KEEP_ALIVE = Duration.ofSeconds(15);
    private static final int MAX_FRAMES_PER_WRITE = 128;
    private static final Duration COALESCE = Duration.ofMillis(1);
    private static final String END_OF_STREAM = "";
    private static final Set<String> EVENT_NAMES = Set.of("queued", "running", "progress", "succeeded", "failed",
            "cancelled");

    private final EventStreams streams;
    private final EventLog log;
    private final TaskStore tasks;
    private final Workers workers;
    private final JsonMapper json;
    private final DataBufferFactory buffers = DefaultDataBufferFactory.sharedInstance;

    EventStreamController(EventStreams streams, EventLog log, TaskStore tasks, Workers workers, JsonMapper json) {
        this.streams = streams;
        this.log = log;
        this.tasks = tasks;
        this.workers = workers;
        this.json = json;
    }

    @Operation(operationId = "taskEvents",
            summary = "One task's events: its history, then live ones; ends when the task is terminal",
            description = "Resumes after Last-Event-ID (header, or the lastEventId parameter) with nothing lost or repeated.",
            responses = {
                @ApiResponse(responseCode = "200", description = "text/event-stream frames: id, event (queued, running, progress, succeeded, failed, cancelled), JSON data"),
                @ApiResponse(responseCode = "204", description = "Reconnected after the last event of a terminal task")
            })
    @GetMapping(path = "/tasks/{id}/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Mono<ResponseEntity<Flux<DataBuffer>>> taskEvents(
            @PathVariable String id,
            @RequestHeader(name = "Last-Event-ID", required = false) @Nullable String lastEventIdHeader,
            @RequestParam(required = false) @Nullable String lastEventId) {
        long taskId = TaskIds.parse(id);
        Long after = cursor(lastEventIdHeader, lastEventId);
        return tasks.get(taskId).zipWith(log.lastOfTask(taskId)).map(found -> {
            long last = found.getT2();
            if (found.getT1().state().isTerminal() && after != null && after >= last) {
                return ResponseEntity.noContent().<Flux<DataBuffer>>build(); // tells EventSource to stop
            }
            return stream(streams.task(taskId, after == null ? 0 : after, last));
        });
    }

    @Operation(operationId = "events",
            summary = "Every event from now on (or after Last-Event-ID), optionally one queue and some event names; never ends",
            description = "Resumes after Last-Event-ID (header, or the lastEventId parameter) with nothing lost or repeated.",
            responses = {
                @ApiResponse(responseCode = "200", description = "text/event-stream frames; a gap event (no id) first where retention pruned events after the cursor")
            })
    @GetMapping(path = "/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    ResponseEntity<Flux<DataBuffer>> allEvents(
            @RequestParam(required = false) @Nullable String queue,
            @RequestParam(required = false) @Nullable String events,
            @RequestHeader(name = "Last-Event-ID", required = false) @Nullable String lastEventIdHeader,
            @RequestParam(required = false) @Nullable String lastEventId) {
        Predicate<TaskEvent> filter = filter(queue, events);
        return stream(streams.all(cursor(lastEventIdHeader, lastEventId), filter));
    }

    /**
     * Frames are written as the contract shows them ({@code id: 1234}, {@code event: ...},
     * {@code data: ...}); idle streams get a comment line every 15 seconds. Frames ready within
     * the same millisecond go out in one write: a write and flush per frame capped a busy
     * stream at about 5,000 events a second, and a subscriber that cannot keep up falls back to
     * reading from the table, seconds behind.
     */
    private ResponseEntity<Flux<DataBuffer>> stream(Flux<? extends StreamItem> events) {
        // The end of the events is marked in-band so that the keep-alive ticks stop with it.
        Flux<String> frames = events.map(item -> frame((StreamItem) item)).concatWith(Mono.just(END_OF_STREAM));
        Flux<String> keepAlive = Flux.interval(KEEP_ALIVE, KEEP_ALIVE).onBackpressureDrop().map(tick -> ": keep-alive\n\n");
        Flux<DataBuffer> body = Flux.merge(frames, keepAlive)
                .takeWhile(text -> !END_OF_STREAM.equals(text))
                .takeUntilOther(workers.draining()) // a draining replica closes its streams; clients reconnect elsewhere
                .bufferTimeout(MAX_FRAMES_PER_WRITE, COALESCE, true)
                .map(texts -> buffers.wrap(String.join("", texts).getBytes(StandardCharsets.UTF_8)));
        return ResponseEntity.ok()
                .cacheControl(CacheControl.noStore())
                .header("X-Accel-Buffering", "no")
                .contentType(MediaType.TEXT_EVENT_STREAM)
                .body(body);
    }

    private String frame(StreamItem item) {
        if (item instanceof Gap gap) {
            // no id line: the client's cursor stays on the last event it really received
            return "event: gap\ndata: " + json.createObjectNode().put("prunedThrough", gap.prunedThrough()) + "\n\n";
        }
        return frame((TaskEvent) item);
    }

    private String frame(TaskEvent event) {
        ObjectNode data = json.createObjectNode();
        data.put("eventId", event.id());
        data.put("taskId", event.taskId());
        data.put("queue", event.queue());
        data.put("type", event.taskType());
        data.put("state", event.state());
        data.put("attempt", event.attempt());
        data.put("at", WireTime.format(event.at()));
        json.readTree(event.detail()).properties().forEach(field -> data.set(field.getKey(), field.getValue()));
        return "id: " + event.id() + "\nevent: " + event.name() + "\ndata: " + data + "\n\n";
    }

    private static @Nullable Long cursor(@Nullable String header, @Nullable String parameter) {
        String value = header != null && !header.isBlank() ? header : parameter;
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            long cursor = Long.parseLong(value.strip());
            if (cursor < 0) {
                throw new NumberFormatException();
            }
            return cursor;
        } catch (NumberFormatException e) {
            throw new MalformedRequestException("Last-Event-ID", "must be a non-negative whole number");
        }
    }

    private static Predicate<TaskEvent> filter(@Nullable String queue, @Nullable String events) {
        Predicate<TaskEvent> filter = e -> true;
        if (queue != null && !queue.isEmpty()) {
            EnqueueRequests.requireQueueName(queue);
            filter = filter.and(e -> e.queue().equals(queue));
        }
        if (events != null && !events.isEmpty()) {
            Set<String> names = Arrays.stream(events.split(",")).map(String::strip).filter(n -> !n.isEmpty())
                    .collect(Collectors.toUnmodifiableSet());
            if (!EVENT_NAMES.containsAll(names)) {
                throw new InvalidRequestException("events", "must be event names from " + EVENT_NAMES);
            }
            filter = filter.and(e -> names.contains(e.name()));
        }
        return filter;
    }
}
