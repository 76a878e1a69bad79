package dev.tasklane.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.support.PeriodicJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Makes the tasks of due fire times, on every replica every {@code tasklane.scheduler.interval}.
 * No replica leads: each round locks a due schedule with SKIP LOCKED, and each fire time becomes
 * a task only through the row that claims it in {@code schedule_fire}, so replicas that race,
 * start or stop around a fire time still make one task for it.
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

    @Autowired
    Scheduler(ScheduleStore schedules, TaskStore tasks, TasklaneProperties properties) {
        this(schedules, tasks, properties.scheduler(), Clock.systemUTC());
    }

    /** A scheduler on its own clock: tests run it on virtual time. */
    public Scheduler(ScheduleStore schedules, TaskStore tasks, TasklaneProperties.Scheduler settings, Clock clock) {
        super("Scheduler", settings.interval());
        this.schedules = schedules;
        this.tasks = tasks;
        this.misfireGrace = settings.misfireGrace();
        this.clock = clock;
    }

    @Override
    protected Mono<Integer> runOnce() {
        return round();
    }

    /** One round at the clock's now; emits how many tasks it made. */
    public Mono<Integer> round() {
        return Mono.defer(() -> {
            Instant now = clock.instant();
            return schedules.due(now, ROUND)
                    .concatMap(name -> schedules.fire(name, now, misfireGrace)
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
