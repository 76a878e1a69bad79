package dev.tasklane.maintenance;

import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.support.PeriodicJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Ends attempts whose lease expired (their worker died, hung or lost the database) or whose
 * timeout passed, every {@code TASKLANE_RESCUE_INTERVAL}: back in their queue with the attempt
 * counted, or failed when none is left; and forgets stray running rows (see
 * {@code TaskSql.FORGET_STRAY_ROWS}). Every replica runs it, on the workers' own pool; SKIP
 * LOCKED in the statement keeps them off each other's rows.
 */
@Component
@ConditionalOnBooleanProperty(name = "tasklane.maintenance.enabled", matchIfMissing = true)
final class LeaseRescuer extends PeriodicJob {

    private static final Logger log = LoggerFactory.getLogger(LeaseRescuer.class);
    private static final int BATCH = 500;

    private final TaskStore store;

    LeaseRescuer(TaskStore store, TasklaneProperties properties) {
        super("Lease rescue", properties.rescueInterval());
        this.store = store.onWorkerPool();
    }

    @Override
    protected Mono<Long> runOnce() {
        return rescueAll().doOnNext(count -> {
            if (count > 0) {
                log.info("Rescued {} tasks whose lease expired or whose attempt timed out", count);
            }
        });
    }

    /**
     * Rescues until no expired lease is left, then forgets the running rows of tasks no longer
     * running; emits how many tasks it rescued.
     */
    Mono<Long> rescueAll() {
        return rescueBatch()
                .expand(rescued -> rescued.size() < BATCH ? Mono.empty() : rescueBatch())
                .map(rescued -> (long) rescued.size())
                .reduce(0L, Long::sum)
                .flatMap(rescued -> forgetStrayRows().thenReturn(rescued));
    }

    /** The sweep after the rescue: a failure of its own, logged, fails neither the rescue nor its count. */
    private Mono<Long> forgetStrayRows() {
        return store.forgetStrayRows()
                .doOnNext(stray -> {
                    if (stray > 0) {
                        log.warn("Forgot {} running rows of tasks no longer running", stray);
                    }
                })
                .onErrorResume(e -> {
                    log.warn("Forgetting stray running rows failed: {}", e.toString());
                    return Mono.just(0L);
                });
    }

    private Mono<List<Task>> rescueBatch() {
        return store.rescueExpired(BATCH).collectList();
    }
}
