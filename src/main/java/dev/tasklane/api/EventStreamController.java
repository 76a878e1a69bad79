package dev.tasklane.api;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import dev.tasklane.events.EventFilter;
import dev.tasklane.events.EventLog;
import dev.tasklane.events.EventStreams;
import dev.tasklane.events.SseFrames;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The two Server-Sent Event streams: one task's events, and every event (optionally filtered). */
@RestController
@RequestMapping("/api/v1")
class EventStreamController {

    private static final Duration KEEP_ALIVE = Duration.ofSeconds(15);
    private static final int MAX_FRAMES_PER_WRITE = 128;
    private static final Duration COALESCE = Duration.ofMillis(1);
    /** Bytes of one stream on their way to the socket; with the live buffer and the batching, a stalled client costs about 320 KiB. */
    private static final int WRITE_BUDGET = 128 * 1024;
    private static final byte[] END_OF_STREAM = new byte[0];
    /** In the order of a task's life, as the refusal of an unknown name lists them. */
    private static final List<String> EVENT_NAMES = List.of("queued", "running", "progress", "succeeded", "failed",
            "cancelled");

    private final EventStreams streams;
    private final EventLog log;
    private final TaskStore tasks;
    private final Workers workers;

    EventStreamController(EventStreams streams, EventLog log, TaskStore tasks, Workers workers) {
        this.streams = streams;
        this.log = log;
        this.tasks = tasks;
        this.workers = workers;
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
            @RequestParam(required = false) @Nullable String lastEventId,
            ServerWebExchange exchange) {
        long taskId = TaskIds.parse(id);
        Long after = cursor(lastEventIdHeader, lastEventId);
        refuseWhenFull();
        return tasks.get(taskId).zipWith(log.lastOfTask(taskId)).map(found -> {
            long last = found.getT2();
            if (found.getT1().state().isTerminal() && after != null && after >= last) {
                return ResponseEntity.noContent().<Flux<DataBuffer>>build(); // tells EventSource to stop
            }
            return stream(streams.task(taskId, after == null ? 0 : after, last), exchange);
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
            @RequestParam(required = false) @Nullable String lastEventId,
            ServerWebExchange exchange) {
        EventFilter filter = filter(queue, events);
        Long after = cursor(lastEventIdHeader, lastEventId);
        refuseWhenFull();
        return stream(streams.all(after, filter), exchange);
    }

    private void refuseWhenFull() {
        if (streams.full()) {
            throw new TooManyStreamsException(streams.maxSubscribers());
        }
    }

    /**
     * Frames are written as the contract shows them; the first one (a comment and a {@code retry:}
     * hint) as soon as the stream follows the live events, so that the headers go out at once;
     * idle streams get a comment every 15 seconds. Frames ready within the same millisecond go
     * out in one write of up to 64 KiB (a write and flush per frame capped a busy stream at about
     * 5,000 events a second). At most {@link #WRITE_BUDGET} bytes of a stream are on their way to
     * the socket at once.
     */
    private ResponseEntity<Flux<DataBuffer>> stream(Flux<byte[]> frames, ServerWebExchange exchange) {
        if (HttpMethod.HEAD.equals(exchange.getRequest().getMethod())) {
            // HEAD gets GET's headers at once; Spring would otherwise read the (endless) body to its end.
            return eventStream(Flux.empty());
        }
        WriteBudget budget = new WriteBudget(WRITE_BUDGET, exchange.getResponse().bufferFactory());
        // The end of the frames is marked in-band so that the keep-alive ticks stop with it.
        Flux<byte[]> keepAlive = Flux.interval(KEEP_ALIVE, KEEP_ALIVE).onBackpressureDrop().map(tick -> SseFrames.KEEP_ALIVE);
        Flux<DataBuffer> body = Flux.merge(frames.concatWith(Mono.just(END_OF_STREAM)), keepAlive)
                .takeWhile(frame -> frame != END_OF_STREAM)
                .takeUntilOther(workers.draining()) // a draining replica closes its streams; clients reconnect elsewhere
                .transform(ready -> FrameBatches.of(ready, MAX_FRAMES_PER_WRITE, WriteBudget.MAX_WRITE, COALESCE))
                .flatMapIterable(WriteBudget::writes, 1)
                .concatMap(budget::admit, 1);
        return eventStream(body);
    }

    private static ResponseEntity<Flux<DataBuffer>> eventStream(Flux<DataBuffer> body) {
        return ResponseEntity.ok()
                .cacheControl(CacheControl.noStore())
                .header("X-Accel-Buffering", "no")
                .contentType(MediaType.TEXT_EVENT_STREAM)
                .body(body);
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

    private static EventFilter filter(@Nullable String queue, @Nullable String events) {
        String oneQueue = null;
        if (queue != null && !queue.isEmpty()) {
            EnqueueRequests.requireQueueName(queue);
            oneQueue = queue;
        }
        Set<String> names = Set.of();
        if (events != null && !events.isEmpty()) {
            names = Arrays.stream(events.split(",")).map(String::strip).filter(n -> !n.isEmpty())
                    .collect(Collectors.toUnmodifiableSet());
            if (!EVENT_NAMES.containsAll(names)) {
                throw new InvalidRequestException("events", "must be event names from " + EVENT_NAMES);
            }
        }
        return new EventFilter(oneQueue, names);
    }
}
