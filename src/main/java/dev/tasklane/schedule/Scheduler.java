package dev.tasklane.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.support.PeriodicJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Makes the tasks of due fire times, on every replica every {@code tasklane.scheduler.interval},
 * by the database's clock rather than the replica's. No replica leads: each round locks a due
 * schedule with SKIP LOCKED, and each fire time becomes a task only through the row that claims
 * it in {@code schedule_fire}, so replicas that race, start or stop around a fire time still make
 * one task for it.
 */
@Component
public final class Scheduler extends PeriodicJob {

    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);

    /** Due schedules one round looks at; the rest wait for the next round. */
    static final int ROUND = 100;

    private final ScheduleStore schedules;
    private final TaskStore tasks;
    private final Duration misfireGrace;
    private final Clock clock;
    private final Mono<Instant> databaseClock;

    @Autowired
    Scheduler(ScheduleStore schedules, TaskStore tasks, TasklaneProperties properties) {
        this(schedules, tasks, properties.scheduler(), Clock.systemUTC(), schedules.now());
    }

    /** A scheduler on virtual time: the clock stands for the database's too. */
    public Scheduler(ScheduleStore schedules, TaskStore tasks, TasklaneProperties.Scheduler settings, Clock clock) {
        this(schedules, tasks, settings, clock, Mono.fromSupplier(clock::instant));
    }

    /**
     * A scheduler whose replica and database may disagree on the time; tests set them apart.
     *
     * @param clock this replica's clock: only how fast it runs counts, never what it reads
     * @param databaseClock reads the database's clock, the one claims, leases and every replica's
     *        scheduler go by
     */
    public Scheduler(ScheduleStore schedules, TaskStore tasks, TasklaneProperties.Scheduler settings, Clock clock,
                     Mono<Instant> databaseClock) {
        super("Scheduler", settings.interval());
        this.schedules = schedules;
        this.tasks = tasks;
        this.misfireGrace = settings.misfireGrace();
        this.clock = clock;
        this.databaseClock = databaseClock;
    }

    @Override
    protected Mono<Integer> runOnce() {
        return round();
    }

    /**
     * One round at the database's time; emits how many tasks it made. By its own clock, a replica
     * running ahead by more than the grace would see the coming fire times as missed (dropped
     * under {@code catchUp: none}) and the ones after them as due. So the round reads the database's
     * clock once and keeps it as an offset from this replica's, to plan each schedule at the time
     * its turn comes (a round may wait on a lock or make a hundred catch-up tasks) without another
     * round trip. The offset is taken after the read, so it errs early by that round trip: a fire
     * time is never made before the database's clock reaches it.
     */
    public Mono<Integer> round() {
        return databaseClock.flatMap(databaseNow -> {
            Duration offset = Duration.between(clock.instant(), databaseNow);
            return schedules.due(databaseNow, ROUND)
                    .concatMap(name -> Mono.<List<Task>>defer(
                                    () -> schedules.fire(name, clock.instant().plus(offset), misfireGrace))
                            .doOnNext(tasks::announceEnqueued)
                            .map(List::size)
                            .onErrorResume(e -> {
                                log.warn("Firing schedule {} failed; the next round tries again: {}", name, e.toString());
                                return Mono.just(0);
                            }))
                    .reduce(0, Integer::sum);
        });
    }
}
