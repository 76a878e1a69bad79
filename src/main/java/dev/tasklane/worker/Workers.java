package dev.tasklane.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.notify.Channel;
import dev.tasklane.notify.Notifier;
import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.LeaseKey;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
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
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * The in-process workers of this replica and their lifecycle: one {@link QueueWorker} per
 * configured queue, the {@link LeaseKeeper} of what they run, the completer they share, the
 * replica's registration, and the drain on shutdown (stop claiming; let what runs finish within
 * the shutdown phase; release the rest). It also stops the attempt of a cancelled task, here or,
 * by NOTIFY, on the replica that runs it.
 */
@Component
public class Workers implements SmartLifecycle {

    static final String RELEASED_ON_SHUTDOWN = "released on shutdown";
    private static final Logger log = LoggerFactory.getLogger(Workers.class);
    private static final Duration RELEASE_BUDGET = Duration.ofSeconds(3);
    private static final Duration DRAIN_CHECK = Duration.ofMillis(20);

    private final String workerId;
    private final TaskStore store;
    private final TaskStore workerStore;
    private final ClaimHandoff handoff;
    private final Notifier notifier;
    private final LeaseKeeper keeper;
    private final List<QueueWorker> queues;
    private final ReplicaRegistration registration;
    private final Duration drainTimeout;
    // Replaced on every start: Spring may stop and start the lifecycle again (its test context
    // cache pauses contexts that way), and a disposed subscription or a completed sink is final.
    private volatile Sinks.Empty<Void> draining = Sinks.empty();
    private volatile Disposable cancels = Disposables.disposed();
    private volatile boolean started;

    Workers(TasklaneProperties properties, TaskStore store, ClaimHandoff handoff, HandlerRegistry handlers,
            Wakeups wakeups, WorkerRegistry registry, Notifier notifier, JsonMapper json, TaskTracing tracing,
            @Value("${spring.lifecycle.timeout-per-shutdown-phase:30s}") Duration shutdownPhase) {
        this.workerId = replicaId();
        this.store = store;
        this.workerStore = store.onWorkerPool();
        this.handoff = handoff;
        this.notifier = notifier;
        Duration lease = properties.worker().lease();
        this.keeper = new LeaseKeeper((leases, duration) -> workerStore.renewLeases(workerId, leases, duration),
                lease, Schedulers.parallel());
        this.drainTimeout = shutdownPhase.minus(RELEASE_BUDGET).isNegative() ? Duration.ZERO
                : shutdownPhase.minus(RELEASE_BUDGET);
        QueueWorker.Tools tools = new QueueWorker.Tools(workerId, workerStore, store, handoff, handlers,
                new BatchCompleter(workerStore), wakeups,
                new Backoff(properties.retry().baseDelay(), properties.retry().maxDelay()), json, lease,
                properties.worker().pollInterval(), properties.maxPayloadBytes(), Schedulers.parallel(),
                tracing);
        this.queues = QueueSpec.parseAll(properties.worker().queues()).stream()
                .map(spec -> new QueueWorker(spec, keeper, tools))
                .toList();
        this.registration = new ReplicaRegistration(registry, workerId,
                queues.stream().map(QueueWorker::queue).toList(), keeper::size);
    }

    /** The id this replica's leases and registry row carry. */
    public String workerId() {
        return workerId;
    }

    /** The queues this replica works in-process. */
    public Set<String> queueNames() {
        return queues.stream().map(QueueWorker::queue).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Cancels a queued or running task; the attempt that ran it is stopped, here at once or on its
     * replica by NOTIFY (failing that, by its next lease renewal, which the cancel has revoked).
     * Only that attempt: a later claim of the same task (retried meanwhile) runs on.
     */
    public Mono<Task> cancel(long taskId) {
        return store.cancel(taskId).flatMap(cancelled -> stopAttempts(List.of(cancelled)).thenReturn(cancelled.task()));
    }

    /**
     * Cancels the queued and running tasks among some ids (a batch of a bulk cancel), stopping
     * the attempts that ran them as {@link #cancel} does; emits how many it cancelled.
     */
    public Mono<Integer> cancelMany(List<Long> ids) {
        return store.cancelMany(ids).flatMap(cancelled -> stopAttempts(cancelled).thenReturn(cancelled.size()));
    }

    /** Stops the attempts that ran cancelled tasks: here at once, elsewhere by one NOTIFY. */
    private Mono<Void> stopAttempts(List<TaskStore.Cancelled> cancelled) {
        List<String> elsewhere = new ArrayList<>();
        for (TaskStore.Cancelled task : cancelled) {
            String previous = task.previousWorkerId();
            if (previous == null || task.previousLeaseId() == null) {
                continue;
            }
            LeaseKey lease = new LeaseKey(task.task().id(), task.previousLeaseId());
            if (previous.equals(workerId)) {
                keeper.stop(lease, Attempt.Stop.CANCELLED);
            } else {
                elsewhere.add(lease.taskId() + ":" + lease.leaseId());
            }
        }
        return elsewhere.isEmpty() ? Mono.empty() : notifier.send(Channel.CANCEL, elsewhere);
    }

    /** Completes when this replica starts draining: waiting long polls answer, streams close. */
    public Mono<Void> draining() {
        return Mono.defer(() -> draining.asMono());
    }

    @Override
    public void start() {
        draining = Sinks.empty();
        keeper.start();
        queues.forEach(QueueWorker::start);
        cancels = notifier.notifications(Channel.CANCEL)
                .subscribe(payload -> parseLease(payload).ifPresent(lease -> keeper.stop(lease, Attempt.Stop.CANCELLED)));
        registration.start();
        started = true;
        if (!queues.isEmpty()) {
            log.info("Working queues {} in-process as {}", queueNames(), workerId);
        }
    }

    @Override
    public void stop(Runnable callback) {
        draining.tryEmitEmpty();
        queues.forEach(QueueWorker::drain);
        log.info("Draining: {} tasks in flight, waiting up to {}", keeper.size(), drainTimeout);
        Flux.interval(DRAIN_CHECK)
                .filter(tick -> keeper.isEmpty() && handoff.inFlight() == 0)
                .next()
                .then()
                .timeout(drainTimeout, Mono.defer(this::releaseRemaining))
                .onErrorResume(e -> {
                    log.warn("Drain did not finish cleanly: {}", e.toString());
                    return Mono.empty();
                })
                .then(registration.leave())
                .doFinally(signal -> {
                    queues.forEach(QueueWorker::stop);
                    cancels.dispose();
                    keeper.stop();
                    started = false;
                    callback.run();
                })
                .subscribe();
    }

    private Mono<Void> releaseRemaining() {
        List<LeaseKey> leases = keeper.stopAll(Attempt.Stop.RELEASED);
        log.info("Releasing {} unfinished tasks to queued", leases.size());
        return store.onWorkerPool().releaseLeases(leases, RELEASED_ON_SHUTDOWN)
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

    private static Optional<LeaseKey> parseLease(String payload) {
        int colon = payload.indexOf(':');
        try {
            return Optional.of(new LeaseKey(Long.parseLong(payload.substring(0, colon)),
                    UUID.fromString(payload.substring(colon + 1))));
        } catch (RuntimeException e) {
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
