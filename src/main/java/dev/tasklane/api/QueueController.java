package dev.tasklane.api;

import dev.tasklane.support.WireTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import dev.tasklane.queue.FlowLimits;
import dev.tasklane.queue.FlowPatch;
import dev.tasklane.queue.QueueStats;
import dev.tasklane.queue.QueueStore;
import dev.tasklane.worker.WorkerInfo;
import dev.tasklane.worker.WorkerRegistry;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** Queues (counts, pause, resume) and the live workers. */
@RestController
@RequestMapping("/api/v1")
class QueueController {

    private final QueueStore queues;
    private final Workers workers;
    private final WorkerRegistry registry;

    QueueController(QueueStore queues, Workers workers, WorkerRegistry registry) {
        this.queues = queues;
        this.workers = workers;
        this.registry = registry;
    }

    /** A queue as {@code GET /queues} lists it. */
    record QueueJson(String name, long queued, long running, long succeeded, long failed, long cancelled,
                     @Nullable Double oldestQueuedAgeSeconds, boolean paused, boolean workedInProcess,
                     LimitsJson limits, HeldBackJson heldBack) {
    }

    /** A queue's flow control; null means no such limit. */
    record LimitsJson(@Nullable Integer maxRunning, @Nullable Integer maxRunningPerKey, @Nullable RateJson rate,
                      @Nullable RateJson ratePerKey, String fairness) {

        static LimitsJson of(FlowLimits limits) {
            return new LimitsJson(limits.maxRunning(), limits.maxRunningPerKey(), RateJson.of(limits.rate()),
                    RateJson.of(limits.ratePerKey()), limits.fairness().wireName());
        }
    }

    /** At most {@code count} claims start in any window of {@code periodSeconds}. */
    record RateJson(int count, int periodSeconds) {

        static @Nullable RateJson of(FlowLimits.@Nullable Rate rate) {
            return rate == null ? null : new RateJson(rate.count(), rate.periodSeconds());
        }
    }

    /** Due tasks held back now, by the limit that holds them. */
    record HeldBackJson(long maxRunning, long maxRunningPerKey, long rate) {
    }

    record QueueList(List<QueueJson> queues) {
    }

    record WorkerList(List<WorkerJson> workers) {
    }

    /** A live worker as {@code GET /workers} lists it. */
    record WorkerJson(String id, String kind, List<String> queues, int inFlight, String startedAt, String lastSeenAt) {

        static WorkerJson of(WorkerInfo w) {
            return new WorkerJson(w.id(), w.kind(), w.queues(), w.inFlight(), WireTime.format(w.startedAt()),
                    WireTime.format(w.lastSeenAt()));
        }
    }

    @Operation(operationId = "listQueues",
            summary = "Every queue with its counts (may lag by up to 5 s)",
            responses = {
                @ApiResponse(responseCode = "200", description = "The queues")
            })
    @GetMapping("/queues")
    Mono<QueueList> list() {
        Set<String> inProcess = workers.queueNames();
        return queues.all().map(stats -> {
            TreeMap<String, QueueJson> byName = new TreeMap<>();
            inProcess.forEach(name -> byName.put(name, json(QueueStats.empty(name), true)));
            stats.forEach(s -> byName.put(s.name(), json(s, inProcess.contains(s.name()))));
            return new QueueList(new ArrayList<>(byName.values()));
        });
    }

    @Operation(operationId = "pauseQueue",
            summary = "Stop claims from a queue (creates it if unknown)",
            responses = {
                @ApiResponse(responseCode = "200", description = "The queue")
            })
    @PostMapping("/queues/{queue}/pause")
    Mono<QueueJson> pause(@PathVariable String queue) {
        EnqueueRequests.requireQueueName(queue);
        return queues.setPaused(queue, true).map(stats -> json(stats, workers.queueNames().contains(queue)));
    }

    @Operation(operationId = "resumeQueue",
            summary = "Let a paused queue be claimed from again",
            responses = {
                @ApiResponse(responseCode = "200", description = "The queue")
            })
    @PostMapping("/queues/{queue}/resume")
    Mono<QueueJson> resume(@PathVariable String queue) {
        EnqueueRequests.requireQueueName(queue);
        return queues.setPaused(queue, false)
                .map(stats -> json(stats, workers.queueNames().contains(queue)));
    }

    @Operation(operationId = "patchQueue",
            summary = "Set a queue's flow control (JSON merge patch: null clears a setting; creates the queue)",
            responses = {
                @ApiResponse(responseCode = "200", description = "The queue")
            })
    @PatchMapping(path = "/queues/{queue}", consumes = {"application/merge-patch+json", "application/json"})
    Mono<QueueJson> patch(@PathVariable String queue,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.QueuePatch.class)))
            @RequestBody JsonNode body) {
        EnqueueRequests.requireQueueName(queue);
        FlowPatch patch = readPatch(body);
        return queues.patchFlow(queue, patch).map(stats -> json(stats, workers.queueNames().contains(queue)));
    }

    /** A patch of flow control, or 400 (a field of the wrong JSON type) or 422 naming each bad field. */
    static FlowPatch readPatch(JsonNode body) {
        try {
            return FlowPatch.read(body, "");
        } catch (FlowPatch.InvalidFlowPatch e) {
            e.problems().stream().filter(FlowPatch.Problem::wrongType).findFirst().ifPresent(problem -> {
                throw new MalformedRequestException(problem.field(), problem.message());
            });
            throw new InvalidRequestException(e.problems().stream()
                    .map(problem -> new FieldError(problem.field(), problem.message())).toList());
        }
    }

    @Operation(operationId = "listWorkers",
            summary = "Live workers: replicas and pull workers",
            responses = {
                @ApiResponse(responseCode = "200", description = "The workers")
            })
    @GetMapping("/workers")
    Mono<WorkerList> workers() {
        return registry.live().map(WorkerJson::of).collectList().map(WorkerList::new);
    }

    private static QueueJson json(QueueStats s, boolean workedInProcess) {
        return new QueueJson(s.name(), s.queued(), s.running(), s.succeeded(), s.failed(), s.cancelled(),
                s.oldestQueuedAgeSeconds(), s.paused(), workedInProcess, LimitsJson.of(s.limits()),
                new HeldBackJson(s.heldBack().maxRunning(), s.heldBack().maxRunningPerKey(), s.heldBack().rate()));
    }
}
