package dev.tasklane.maintenance;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.QueueStore;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.schedule.ScheduleStore;
import dev.tasklane.support.PeriodicJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Deletes terminal tasks that finished more than {@code TASKLANE_RETENTION} ago, the events
 * written as long ago that no task still waiting or running needs, the rate bookkeeping that no window needs, and
 * the fire times that schedules have settled, every {@code tasklane.maintenance.retention-interval}. Small batches, each its own
 * short transaction, so that no lock is held for long and a big backlog of finished rows is
 * worked off without one statement that runs for minutes. Every replica runs it; SKIP LOCKED
 * keeps them apart.
 */
@Component
@ConditionalOnBooleanProperty(name = "tasklane.maintenance.enabled", matchIfMissing = true)
final class Retention extends PeriodicJob {

    private static final Logger log = LoggerFactory.getLogger(Retention.class);
    static final int BATCH = 500;

    private final TaskStore store;
    private final QueueStore queues;
    private final ScheduleStore schedules;
    private final Duration retention;
    private final Clock clock;

    Retention(TaskStore store, QueueStore queues, ScheduleStore schedules, TasklaneProperties properties) {
        super("Retention", properties.maintenance().retentionInterval());
        this.store = store;
        this.queues = queues;
        this.schedules = schedules;
        this.retention = properties.retention();
        this.clock = Clock.systemUTC();
    }

    @Override
    protected Mono<Long> runOnce() {
        return pruneAll().doOnNext(count -> {
            if (count > 0) {
                log.info("Pruned {} tasks that finished more than {} ago", count, retention);
            }
        });
    }

    /**
     * Prunes until nothing old enough is left: finished tasks with the event batches that no task
     * still needs, and the tombstones of deleted tasks; emits how many tasks it pruned.
     */
    Mono<Long> pruneAll() {
        return Mono.defer(() -> {
            Instant before = clock.instant().minus(retention);
            // Finished tasks are found through the event batches that hold their events, which go with them.
            Mono<Long> tasks = store.pruneOld(before, -1, BATCH)
                    .expand(round -> round.goesOn() ? store.pruneOld(before, round.last(), BATCH) : Mono.empty())
                    .reduce(0L, (sum, round) -> sum + round.tasks());
            Mono<Long> deleted = store.pruneTombstones(before, BATCH)
                    .expand(pruned -> pruned < BATCH ? Mono.empty() : store.pruneTombstones(before, BATCH))
                    .reduce(0L, Long::sum);
            // Rate bookkeeping past every window: not counted as pruned tasks.
            Mono<Long> claimStarts = queues.pruneClaimStarts(BATCH * 10)
                    .expand(pruned -> pruned < BATCH * 10 ? Mono.empty() : queues.pruneClaimStarts(BATCH * 10))
                    .then(Mono.just(0L));
            // Fire times their schedules have settled: kept as long as tasks, not counted either.
            Mono<Long> fires = schedules.pruneFires(before, BATCH * 10)
                    .expand(pruned -> pruned < BATCH * 10 ? Mono.empty() : schedules.pruneFires(before, BATCH * 10))
                    .then(Mono.just(0L));
            return tasks.zipWith(deleted, Long::sum)
                    .zipWith(claimStarts, Long::sum).zipWith(fires, Long::sum);
        });
    }
}
