package dev.tasklane.api;

import dev.tasklane.support.WireTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import dev.tasklane.queue.QueueStats;
import dev.tasklane.queue.QueueStore;
import dev.tasklane.worker.WorkerInfo;
import dev.tasklane.worker.WorkerRegistry;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

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
                     @Nullable Double oldestQueuedAgeSeconds, boolean paused, boolean workedInProcess) {
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
                s.oldestQueuedAgeSeconds(), s.paused(), workedInProcess);
    }
}
