package dev.tasklane.worker;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Claim;
import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * External workers pulling over HTTP: SQS's receive and visibility-timeout model on the same
 * claim, leases and outcomes as the in-process pipelines. A long poll holds no database
 * connection while it waits: the queue's claimer ({@link LongPolls}) claims for it when a wake-up
 * (or the safety poll, or the next due time) says a task may be there. Every call that acts for a
 * lease may name it ({@code leaseId}); without it, any lease of the worker id will do.
 */
@Component
public class PullWorkers implements SmartLifecycle {

    private final TaskStore store;
    private final ClaimHandoff handoff;
    private final WorkerRegistry registry;
    private final Workers workers;
    private final Backoff backoff;
    private final LongPolls longPolls;
    private final TaskTracing tracing;
    private volatile boolean running;

    PullWorkers(TaskStore store, ClaimHandoff handoff, Wakeups wakeups, WorkerRegistry registry, Workers workers,
                TasklaneProperties properties, TaskTracing tracing) {
        this.tracing = tracing;
        this.store = store;
        this.handoff = handoff;
        this.registry = registry;
        this.workers = workers;
        this.backoff = new Backoff(properties.retry().baseDelay(), properties.retry().maxDelay());
        this.longPolls = new LongPolls(store, handoff, wakeups, Schedulers.parallel());
    }

    /** Claims up to {@code claim.limit()} tasks, waiting up to {@code wait} for the first. */
    public Mono<List<Task>> claim(Claim claim, Duration wait) {
        Mono<List<Task>> claimed = wait.isZero() ? handoff.claim(store, claim, () -> LongPolls.HUNG_UP)
                : longPolls.claim(claim, wait, workers.draining());
        return registry.touchPullWorker(claim.workerId(), claim.queue()).then(claimed)
                .doOnNext(tasks -> tasks.forEach(task -> tracing.claimed(task, claim.workerId())));
    }

    public Mono<Task> heartbeat(long taskId, String workerId, @Nullable UUID leaseId, Duration lease) {
        return store.heartbeat(taskId, workerId, leaseId, lease).flatMap(task -> touch(workerId, task));
    }

    public Mono<Task> progress(long taskId, String workerId, @Nullable UUID leaseId, @Nullable Integer percent,
                               @Nullable String message) {
        return store.reportHeldProgress(taskId, workerId, leaseId, percent, message)
                .flatMap(task -> touch(workerId, task));
    }

    public Mono<Task> complete(long taskId, String workerId, @Nullable UUID leaseId, @Nullable String result) {
        Outcome outcome = new Outcome(taskId, leaseId, workerId, true, result, null, false, Duration.ZERO, null);
        return store.completeHeld(outcome).flatMap(task -> touch(workerId, task));
    }

    /** Fails the attempt: retried after backoff while attempts remain and {@code retry}, else failed. */
    public Mono<Task> fail(long taskId, String workerId, @Nullable UUID leaseId, String error, boolean retry) {
        return store.get(taskId).flatMap(current -> store.completeHeld(new Outcome(taskId, leaseId, workerId, false,
                        null, error, retry, backoff.delayAfter(current.attempt()), null)))
                .flatMap(task -> touch(workerId, task));
    }

    /** Snoozes the attempt: queued again after {@code delay}, not counted (see {@link Outcome#snooze}). */
    public Mono<Task> snooze(long taskId, String workerId, @Nullable UUID leaseId, Duration delay) {
        return store.get(taskId).flatMap(current -> store.completeHeld(Outcome.snooze(taskId, leaseId, workerId,
                        delay, backoff.delayAfter(current.attempt()))))
                .flatMap(task -> touch(workerId, task));
    }

    /**
     * Hands the task back: queued again at once, counting neither the attempt nor a snooze (a
     * worker shutting down). The task's {@code queued} event says {@code released: <reason>}.
     */
    public Mono<Task> release(long taskId, String workerId, UUID leaseId, String reason) {
        return store.releaseHeld(taskId, workerId, leaseId, "released: " + reason)
                .flatMap(task -> touch(workerId, task));
    }

    private Mono<Task> touch(String workerId, Task task) {
        return registry.touchPullWorker(workerId, task.queue()).thenReturn(task);
    }

    @Override
    public void start() {
        longPolls.start();
        running = true;
    }

    @Override
    public void stop() {
        longPolls.stop();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
