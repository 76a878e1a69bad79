package dev.tasklane.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Claim;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * External workers pulling over HTTP: SQS's receive and visibility-timeout model on the same
 * claim, leases and outcomes as the in-process pipelines. A long poll holds no database
 * connection while it waits: it claims once, then again only when a wake-up (or the safety
 * poll) says a task may have become due, until its deadline.
 */
@Component
public class PullWorkers {

    private static final Duration SAFETY_POLL = Duration.ofSeconds(2);

    private final TaskStore store;
    private final Wakeups wakeups;
    private final WorkerRegistry registry;
    private final Workers workers;
    private final Backoff backoff;

    PullWorkers(TaskStore store, Wakeups wakeups, WorkerRegistry registry, Workers workers,
                TasklaneProperties properties) {
        this.store = store;
        this.wakeups = wakeups;
        this.registry = registry;
        this.workers = workers;
        this.backoff = new Backoff(properties.retry().baseDelay(), properties.retry().maxDelay());
    }

    /** Claims up to {@code claim.limit()} tasks, waiting up to {@code wait} for the first. */
    public Mono<List<Task>> claim(Claim claim, Duration wait) {
        Mono<List<Task>> claimed = wait.isZero() ? claimOnce(claim) : claimWaiting(claim, wait);
        return registry.touchPullWorker(claim.workerId(), claim.queue()).then(claimed);
    }

    private Mono<List<Task>> claimOnce(Claim claim) {
        return store.claim(claim).collectList();
    }

    private Mono<List<Task>> claimWaiting(Claim claim, Duration wait) {
        Instant deadline = Instant.now().plus(wait);
        Flux<Long> dueNow = wakeups.of(claim.queue()).flatMap(wakeup -> wakeup.dueAt() == null
                ? Mono.just(0L)
                : wakeup.dueAt().isBefore(deadline) ? Mono.delay(wakeup.delay()) : Mono.empty());
        // Subscribed to wake-ups before the first claim, so that none slips in between.
        // Spread the safety polls of many waiters so that they do not all hit the pool at once.
        Duration firstPoll = SAFETY_POLL.plusMillis(ThreadLocalRandom.current().nextLong(SAFETY_POLL.toMillis()));
        return Flux.merge(Mono.just(0L), dueNow, Flux.interval(firstPoll, SAFETY_POLL).onBackpressureDrop(),
                        wakeups.missedWakeups().map(reconnected -> 0L))
                .onBackpressureLatest()
                .concatMap(trigger -> claimOnce(claim), 1)
                .filter(tasks -> !tasks.isEmpty())
                .next()
                .take(wait)
                .takeUntilOther(workers.draining())
                .defaultIfEmpty(List.of());
    }

    public Mono<Task> heartbeat(long taskId, String workerId, Duration lease) {
        return store.heartbeat(taskId, workerId, lease).flatMap(task -> touch(workerId, task));
    }

    public Mono<Task> progress(long taskId, String workerId, @Nullable Integer percent, @Nullable String message) {
        return store.reportHeldProgress(taskId, workerId, percent, message).flatMap(task -> touch(workerId, task));
    }

    public Mono<Task> complete(long taskId, String workerId, @Nullable String result) {
        Outcome outcome = new Outcome(taskId, -1, workerId, true, result, null, false, Duration.ZERO, true);
        return store.completeHeld(outcome).flatMap(task -> touch(workerId, task));
    }

    /** Fails the attempt: retried after backoff while attempts remain and {@code retry}, else failed. */
    public Mono<Task> fail(long taskId, String workerId, String error, boolean retry) {
        return store.get(taskId).flatMap(current -> {
            Outcome outcome = new Outcome(taskId, current.attempt(), workerId, false, null, error, retry,
                    backoff.delayAfter(current.attempt()), true);
            return store.completeHeld(outcome);
        }).flatMap(task -> {
            if (task.state() == dev.tasklane.queue.TaskState.QUEUED) {
                wakeups.wake(task.queue(), task.runAt());
            }
            return touch(workerId, task);
        });
    }

    private Mono<Task> touch(String workerId, Task task) {
        return registry.touchPullWorker(workerId, task.queue()).thenReturn(task);
    }
}
