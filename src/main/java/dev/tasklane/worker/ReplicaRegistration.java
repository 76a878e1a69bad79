package dev.tasklane.worker;

import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;

import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * This replica's row in the worker registry: refreshed every few seconds with its queues and how
 * much it runs, removed when it has drained. It also forgets workers (of any replica) not seen
 * for a minute.
 */
final class ReplicaRegistration {

    private static final Duration HEARTBEAT = Duration.ofSeconds(5);

    private final WorkerRegistry registry;
    private final String workerId;
    private final List<String> queues;
    private final IntSupplier inFlight;
    private volatile Disposable loop = Disposables.disposed();

    ReplicaRegistration(WorkerRegistry registry, String workerId, List<String> queues, IntSupplier inFlight) {
        this.registry = registry;
        this.workerId = workerId;
        this.queues = List.copyOf(queues);
        this.inFlight = inFlight;
    }

    void start() {
        loop = Flux.interval(Duration.ZERO, HEARTBEAT)
                .onBackpressureDrop()
                .concatMap(tick -> (queues.isEmpty() ? Mono.<Void>empty()
                        : registry.heartbeat(workerId, queues, inFlight.getAsInt()))
                        .then(registry.forgetStale())
                        .onErrorResume(e -> Mono.empty()), 1)
                .subscribe();
    }

    /** Stops the heartbeat and removes the row. */
    Mono<Void> leave() {
        return Mono.defer(() -> {
            loop.dispose();
            return registry.forget(workerId).onErrorResume(e -> Mono.empty());
        });
    }
}
