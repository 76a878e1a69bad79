package dev.tasklane.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.events.NotificationListener;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.support.Batcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.json.JsonMapper;

/**
 * The in-process workers of this replica: one {@link QueueWorker} per configured queue, the
 * completer they share, the lease keeper that renews what they run (and stops what they may no
 * longer run), the replica's row in the worker registry, and the drain on shutdown.
 */
@Component
public class Workers implements SmartLifecycle {

    static final String RELEASED_ON_SHUTDOWN = "released on shutdown";
    private static final Logger log = LoggerFactory.getLogger(Workers.class);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    private static final Duration RELEASE_BUDGET = Duration.ofSeconds(3);

    private final String workerId;
    private final List<QueueWorker> queues;
    private final TaskStore store;
    private final WorkerRegistry registry;
    private final NotificationListener listener;
    private final Duration lease;
    private final Duration drainTimeout;
    private final Map<Long, RunningTask> running = new ConcurrentHashMap<>();
    // Replaced on every start: Spring may stop and start the lifecycle again (its test context
    // cache pauses contexts that way), and a disposed composite or a completed sink is final.
    private volatile Disposable.Composite loops = Disposables.composite();
    private volatile Sinks.Empty<Void> draining = Sinks.empty();
    private volatile boolean started;

    Workers(TasklaneProperties properties, TaskStore store, HandlerRegistry handlers, Wakeups wakeups,
            WorkerRegistry registry, NotificationListener listener, JsonMapper json,
            @Value("${spring.lifecycle.timeout-per-shutdown-phase:30s}") Duration shutdownPhase) {
        this.workerId = replicaId();
        this.store = store;
        this.registry = registry;
        this.listener = listener;
        this.lease = properties.worker().lease();
        this.drainTimeout = shutdownPhase.minus(RELEASE_BUDGET).isNegative() ? Duration.ZERO
                : shutdownPhase.minus(RELEASE_BUDGET);
        Batcher<Outcome, Void> completer = Batcher.ofWrites("complete", 500, 2,
                outcomes -> store.complete(outcomes).then());
        Backoff backoff = new Backoff(properties.retry().baseDelay(), properties.retry().maxDelay());
        this.queues = QueueSpec.parseAll(properties.worker().queues()).stream()
                .map(spec -> new QueueWorker(spec, this, store, handlers, completer, wakeups, backoff, json, lease,
                        properties.worker().pollInterval()))
                .toList();
    }

    /** The id this replica's leases and registry row carry. */
    public String workerId() {
        return workerId;
    }

    /** The queues this replica works in-process. */
    public Set<String> queueNames() {
        return queues.stream().map(QueueWorker::queue).collect(Collectors.toUnmodifiableSet());
    }

    /** Stops the handler of a task if it runs here; true if it did. */
    public boolean stopLocally(long taskId, String reason) {
        RunningTask task = running.get(taskId);
        if (task == null) {
            return false;
        }
        task.stop(reason);
        return true;
    }

    /**
     * Cancels a queued or running task; a running handler is stopped, here at once or on its
     * replica by NOTIFY (failing that, by its next lease renewal, which the cancel has revoked).
     */
    public Mono<Task> cancel(long taskId) {
        return store.cancel(taskId).flatMap(cancelled -> {
            String previous = cancelled.previousWorkerId();
            if (previous == null) {
                return Mono.just(cancelled.task());
            }
            if (previous.equals(workerId)) {
                stopLocally(taskId, "cancelled");
                return Mono.just(cancelled.task());
            }
            return listener.send(NotificationListener.CANCEL_CHANNEL, List.of(Long.toString(taskId)))
                    .thenReturn(cancelled.task());
        });
    }

    RunningTask track(Task task, Duration lease) {
        RunningTask tracked = new RunningTask(task, System.nanoTime() + lease.toNanos());
        running.put(task.id(), tracked);
        return tracked;
    }

    void untrack(long taskId) {
        running.remove(taskId);
    }

    @Override
    public void start() {
        loops = Disposables.composite();
        draining = Sinks.empty();
        queues.forEach(QueueWorker::start);
        Duration renewEvery = lease.dividedBy(3);
        loops.add(Flux.interval(renewEvery, renewEvery)
                .onBackpressureDrop() // a slow round skips ticks instead of failing the loop
                .concatMap(tick -> renewLeases().then(Mono.fromRunnable(this::stopLapsed)), 1)
                .subscribe());
        loops.add(listener.notifications(NotificationListener.CANCEL_CHANNEL)
                .subscribe(n -> parseId(n.payload()).ifPresent(id -> stopLocally(id, "cancelled"))));
        loops.add(Flux.interval(Duration.ZERO, HEARTBEAT)
                .onBackpressureDrop()
                .concatMap(tick -> (queues.isEmpty() ? Mono.<Void>empty()
                        : registry.heartbeat(workerId, List.copyOf(queueNames()), running.size()))
                        .then(registry.forgetStale())
                        .onErrorResume(e -> Mono.empty()), 1)
                .subscribe());
        started = true;
        if (!queues.isEmpty()) {
            log.info("Working queues {} in-process as {}", queueNames(), workerId);
        }
    }

    private Mono<Void> renewLeases() {
        if (running.isEmpty()) {
            return Mono.empty();
        }
        List<Long> ids = new ArrayList<>(running.keySet());
        long sentAt = System.nanoTime();
        return store.renewLeases(workerId, ids, lease).collect(Collectors.toSet())
                .doOnNext(held -> ids.forEach(id -> {
                    RunningTask task = running.get(id);
                    if (task == null) {
                        return;
                    }
                    if (held.contains(id)) {
                        task.leaseUntil(sentAt + lease.toNanos());
                    } else {
                        task.stop("lease lost");
                    }
                }))
                .then()
                .onErrorResume(e -> {
                    log.warn("Renewing {} leases failed: {}", ids.size(), e.toString());
                    return Mono.empty();
                });
    }

    /** A handler whose lease may have expired must stop: another worker may already run the task. */
    private void stopLapsed() {
        long now = System.nanoTime();
        running.values().stream().filter(task -> task.leaseLapsed(now)).forEach(task -> task.stop("lease expired"));
    }

    /** Completes when this replica starts draining: waiting long polls answer at once. */
    public Mono<Void> draining() {
        return Mono.defer(() -> draining.asMono());
    }

    @Override
    public void stop(Runnable callback) {
        draining.tryEmitEmpty();
        queues.forEach(QueueWorker::drain);
        log.info("Draining: {} tasks in flight, waiting up to {}", running.size(), drainTimeout);
        Flux.interval(Duration.ofMillis(20))
                .filter(tick -> running.isEmpty())
                .next()
                .then()
                .timeout(drainTimeout, Mono.defer(this::releaseRemaining))
                .onErrorResume(e -> {
                    log.warn("Drain did not finish cleanly: {}", e.toString());
                    return Mono.empty();
                })
                .then(registry.forget(workerId).onErrorResume(e -> Mono.empty()))
                .doFinally(signal -> {
                    queues.forEach(QueueWorker::stop);
                    loops.dispose();
                    started = false;
                    callback.run();
                })
                .subscribe();
    }

    private Mono<Void> releaseRemaining() {
        List<Long> ids = new ArrayList<>(running.keySet());
        running.values().forEach(task -> task.stop(RELEASED_ON_SHUTDOWN));
        log.info("Releasing {} unfinished tasks to queued", ids.size());
        return store.release(workerId, ids, RELEASED_ON_SHUTDOWN)
                .doOnNext(task -> TaskLog.info(log, task, workerId, "Released task {} to queued on shutdown", task.id()))
                .then().timeout(RELEASE_BUDGET);
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("stopped through stop(Runnable)");
    }

    @Override
    public boolean isRunning() {
        return started;
    }

    private static Optional<Long> parseId(String payload) {
        try {
            return Optional.of(Long.parseLong(payload));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static String replicaId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "replica";
        }
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
