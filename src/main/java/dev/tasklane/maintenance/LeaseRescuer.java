package dev.tasklane.maintenance;

import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskState;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.support.PeriodicJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Puts tasks whose lease expired (their worker died, hung or lost the database) back in their
 * queue, counting the attempt, every {@code TASKLANE_RESCUE_INTERVAL}. Every replica runs it;
 * SKIP LOCKED in the statement keeps them off each other's rows.
 */
@Component
@ConditionalOnBooleanProperty(name = "tasklane.maintenance.enabled", matchIfMissing = true)
final class LeaseRescuer extends PeriodicJob {

    private static final Logger log = LoggerFactory.getLogger(LeaseRescuer.class);
    private static final int BATCH = 500;

    private final TaskStore store;
    private final Wakeups wakeups;

    LeaseRescuer(TaskStore store, Wakeups wakeups, TasklaneProperties properties) {
        super("Lease rescue", properties.rescueInterval());
        this.store = store;
        this.wakeups = wakeups;
    }

    @Override
    protected Mono<Long> runOnce() {
        return rescueAll().doOnNext(count -> {
            if (count > 0) {
                log.info("Rescued {} tasks whose lease expired", count);
            }
        });
    }

    /** Rescues until no expired lease is left; emits how many tasks it rescued. */
    Mono<Long> rescueAll() {
        return rescueBatch()
                .expand(rescued -> rescued.size() < BATCH ? Mono.empty() : rescueBatch())
                .map(rescued -> (long) rescued.size())
                .reduce(0L, Long::sum);
    }

    private Mono<List<Task>> rescueBatch() {
        return store.rescueExpired(BATCH).collectList()
                .doOnNext(rescued -> rescued.stream().filter(t -> t.state() == TaskState.QUEUED).map(Task::queue)
                        .distinct().forEach(queue -> wakeups.wake(queue, null)));
    }
}
