package dev.tasklane.maintenance;

import java.time.Duration;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskState;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Puts tasks whose lease expired (their worker died, hung or lost the database) back in their
 * queue, counting the attempt, every {@code TASKLANE_RESCUE_INTERVAL}. Every replica runs it;
 * SKIP LOCKED in the statement keeps them off each other's rows.
 */
@Component
@ConditionalOnBooleanProperty(name = "tasklane.maintenance.enabled", matchIfMissing = true)
final class LeaseRescuer implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LeaseRescuer.class);
    private static final int BATCH = 500;

    private final TaskStore store;
    private final Wakeups wakeups;
    private final Duration interval;
    private volatile Disposable loop;

    LeaseRescuer(TaskStore store, Wakeups wakeups, TasklaneProperties properties) {
        this.store = store;
        this.wakeups = wakeups;
        this.interval = properties.rescueInterval();
    }

    /** Rescues until no expired lease is left; emits how many tasks it rescued. */
    Mono<Long> rescueAll() {
        return rescueBatch()
                .expand(rescued -> rescued.size() < BATCH ? Mono.empty() : rescueBatch())
                .map(rescued -> (long) rescued.size())
                .reduce(0L, Long::sum);
    }

    private Mono<java.util.List<Task>> rescueBatch() {
        return store.rescueExpired(BATCH).collectList()
                .doOnNext(rescued -> rescued.stream().filter(t -> t.state() == TaskState.QUEUED).map(Task::queue)
                        .distinct().forEach(queue -> wakeups.wake(queue, null)));
    }

    @Override
    public void start() {
        loop = Flux.interval(interval, interval)
                .onBackpressureDrop() // a slow rescue skips ticks instead of failing the loop
                .concatMap(tick -> rescueAll()
                        .doOnNext(count -> {
                            if (count > 0) {
                                log.info("Rescued {} tasks whose lease expired", count);
                            }
                        })
                        .onErrorResume(e -> {
                            log.warn("Lease rescue failed: {}", e.toString());
                            return Mono.empty();
                        }), 1)
                .subscribe();
    }

    @Override
    public void stop() {
        Disposable running = loop;
        if (running != null) {
            running.dispose();
        }
        loop = null;
    }

    @Override
    public boolean isRunning() {
        return loop != null;
    }
}
