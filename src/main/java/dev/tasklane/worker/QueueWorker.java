package dev.tasklane.worker;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tasklane.queue.Claim;
import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.support.SerializedSink;
import dev.tasklane.support.StorableText;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.NullNode;

/**
 * The pipeline of one in-process queue. It claims only what it has room for (its free slots, in
 * one statement), runs up to {@code concurrency} handlers at once, and hands their outcomes to
 * the completer. A slot frees when its handler ends, not when the outcome is written, so the next
 * claim overlaps the write (up to {@code concurrency} outcomes may wait for it); the attempt
 * stays tracked, its lease renewed, until the write, and a drain waits for it.
 *
 * <p>Claims are triggered by wake-ups (an enqueue here or, by NOTIFY, elsewhere; a task queued
 * again), by a slot freeing up while more may wait, by a timer set to the next due time the
 * database reports when a claim leaves the queue drained, and by a slow safety poll. A claim that
 * took fewer tasks than it asked for showed the queue drained: what arrives after it wakes the
 * pipeline, so the slots that free meanwhile send no claim (on an idle queue every task ended
 * with one, which found nothing).
 */
final class QueueWorker {

    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);
    private static final int MAX_ERROR_LENGTH = 4000;
    private static final Duration TICKS_RETRY = Duration.ofMillis(100);
    private static final Duration TICKS_MAX_RETRY = Duration.ofSeconds(5);

    /**
     * What the pipeline needs besides its queue, shared by every pipeline of the replica.
     * {@code store} is on the workers' own pool (claims, next due times); {@code progressStore}
     * on the main pool, since handlers report progress as often as they like.
     */
    record Tools(String workerId, TaskStore store, TaskStore progressStore, ClaimHandoff handoff, HandlerRegistry handlers,
                 BatchCompleter completer, Wakeups wakeups, Backoff backoff, JsonMapper json, Duration lease,
                 Duration pollInterval, long maxResultBytes, reactor.core.scheduler.Scheduler clock,
                 TaskTracing tracing) {
    }

    private final QueueSpec spec;
    private final AttemptTracker tracker;
    private final Tools tools;
    private final DueTimer dueTimer;
    private final AtomicInteger inFlight = new AtomicInteger(); // handlers running: the slots taken
    private final AtomicInteger awaitingCommit = new AtomicInteger(); // outcomes handed to the completer
    private final SerializedSink<Long> kicks = new SerializedSink<>();
    // Whether the last claim may have left due tasks behind (it filled every free slot, or was
    // flow-controlled, or failed): only then does a freed slot claim.
    private volatile boolean moreMayWait = true;
    private volatile boolean draining;
    private volatile Disposable pipeline = Disposables.disposed();

    QueueWorker(QueueSpec spec, AttemptTracker tracker, Tools tools) {
        this.spec = spec;
        this.tracker = tracker;
        this.tools = tools;
        this.dueTimer = new DueTimer(tools.clock());
    }

    String queue() {
        return spec.queue();
    }

    void start() {
        draining = false;
        Flux<Long> wakeups = tools.wakeups().of(spec.queue()).map(wakeup -> {
            Duration delay = wakeup.delay();
            if (!delay.isZero()) {
                dueTimer.after(delay);
            }
            return delay.isZero() ? 0L : -1L;
        }).filter(tick -> tick >= 0);
        Flux<Long> ticks = Flux.merge(Flux.interval(Duration.ZERO, tools.pollInterval(), tools.clock()).onBackpressureDrop(),
                        wakeups, dueTimer.fires(), tools.wakeups().missedWakeups().map(reconnected -> 0L), kicks.asFlux())
                // A source of ticks that fails (claims handle their own errors) must not end the
                // pipeline: that would cancel the running attempts and leave the queue unworked until
                // a restart. Listening again starts with a poll, for what came meanwhile.
                .doOnError(e -> log.error("Wake-ups of queue {} failed; listening again", spec.queue(), e))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, TICKS_RETRY).maxBackoff(TICKS_MAX_RETRY));
        pipeline = ticks
                .onBackpressureLatest()
                .concatMap(tick -> claimFreeSlots(), 1)
                // One inner per claim, not per attempt: flatMap scans every active inner each time
                // one of them signals, and a thousand attempts in flight made that most of the
                // replica's CPU. Mono.when counts its sources down instead.
                .flatMap(attempts -> Mono.when(attempts.stream().map(this::run).toList()), Integer.MAX_VALUE)
                .subscribe();
    }

    /** Claims no more; running handlers go on. */
    void drain() {
        draining = true;
    }

    void stop() {
        pipeline.dispose();
        dueTimer.cancel();
    }

    private Flux<List<Attempt>> claimFreeSlots() {
        int free = Math.min(spec.concurrency() - inFlight.get(), Claim.MAX_LIMIT);
        if (free <= 0 || draining) {
            return Flux.empty();
        }
        Set<String> types = tools.handlers().types();
        long sentAt = tracker.nanoTime();
        Claim claim = new Claim(spec.queue(), tools.workerId(), free, tools.lease(), types);
        return tools.handoff().claim(tools.store(), claim, () -> "released: the pipeline of queue " + spec.queue()
                        + " stopped before its claim returned")
                .flatMapMany(tasks -> {
                    inFlight.addAndGet(tasks.size());
                    List<Attempt> attempts = tasks.stream().map(task -> tracker.track(task, sentAt)).toList();
                    tasks.forEach(task -> tools.tracing().claimed(task, tools.workerId()));
                    // A flow-controlled claim may come back short with more to take (a key's share
                    // of a round-robin turn): only one that takes nothing shows the queue drained.
                    moreMayWait = tasks.size() == free
                            || (!tasks.isEmpty() && tools.store().flowControlled(spec.queue()));
                    if (moreMayWait) {
                        kick(); // there may be more waiting: look again as soon as a slot frees
                        return Flux.just(attempts);
                    }
                    // The queue is drained for now: look again when its next task comes due. The
                    // handlers start first, since the answer only sets a timer; the next claim
                    // still waits for it.
                    Mono<List<Attempt>> nextDue = tools.store().nextDue(spec.queue(), types)
                            .doOnNext(dueTimer::after)
                            .onErrorResume(e -> Mono.empty())
                            .then(Mono.empty());
                    return Flux.concat(Mono.just(attempts), nextDue);
                })
                .onErrorResume(e -> {
                    log.warn("Claim on queue {} failed: {}", spec.queue(), e.toString());
                    moreMayWait = true;
                    return Flux.empty();
                });
    }

    private Mono<Void> run(Attempt attempt) {
        Task task = attempt.task();
        AtomicBoolean slotHeld = new AtomicBoolean(true);
        return tools.handlers().handler(task.type())
                .map(handler -> tools.tracing().run(task, tools.workerId(), Mono.defer(() -> attempt(handler, task))))
                .orElseGet(() -> Mono.just(Outcome.failure(task, tools.workerId(),
                        "no handler for type " + task.type(), true, tools.backoff().delayAfter(task.attempt()))))
                .takeUntilOther(attempt.whenStopped())
                .switchIfEmpty(Mono.fromSupplier(() -> timedOut(attempt)))
                .doOnNext(outcome -> {
                    if (!outcome.succeeded() && outcome.snooze() == null) {
                        TaskLog.info(log, task, tools.workerId(), "Attempt {} of task {} failed ({}): {}",
                                task.attempt(), task.id(), outcome.retryable() ? "retryable" : "permanent",
                                outcome.error());
                    }
                })
                .flatMap(outcome -> {
                    // The handler is done: its slot may take the next task while the outcome is
                    // written, as long as not too many outcomes wait to be written.
                    if (awaitingCommit.incrementAndGet() <= spec.concurrency()) {
                        releaseSlot(slotHeld);
                    }
                    return tools.completer().submit(outcome)
                            .takeUntilOther(attempt.whenLeaseGone())
                            .doFinally(signal -> awaitingCommit.decrementAndGet());
                })
                .onErrorResume(e -> {
                    // The lease runs out and the rescuer puts the task back; nothing is lost.
                    TaskLog.warn(log, task, tools.workerId(), "Outcome of task {} not recorded: {}", task.id(),
                            e.toString());
                    return Mono.empty();
                })
                .doFinally(signal -> {
                    tracker.untrack(attempt); // only now: a drain waits for outcomes to be written
                    releaseSlot(slotHeld);
                })
                .then();
    }

    /** The outcome of an attempt its keeper stopped: a failure if it ran out of time, else none. */
    private @Nullable Outcome timedOut(Attempt attempt) {
        if (attempt.stopReason() != Attempt.Stop.TIMED_OUT) {
            return null;
        }
        Task task = attempt.task();
        return Outcome.failure(task, tools.workerId(), "timed out after " + task.timeoutSeconds() + "s", true,
                tools.backoff().delayAfter(task.attempt()));
    }

    private Mono<Outcome> attempt(TaskHandler handler, Task task) {
        JsonNode payload = task.payload() == null ? NullNode.getInstance() : tools.json().readTree(task.payload());
        AttemptContext context = new AttemptContext(task, payload, tools.workerId(), tools.progressStore());
        return Mono.defer(() -> handler.handle(context))
                .map(result -> success(task, result))
                .switchIfEmpty(Mono.fromSupplier(() -> Outcome.success(task, tools.workerId(), null)))
                .onErrorResume(error -> Mono.just(error instanceof SnoozeRequested snooze
                        ? Outcome.snooze(task.id(), task.leaseId(), tools.workerId(), snooze.delay(),
                                tools.backoff().delayAfter(task.attempt()))
                        : Outcome.failure(task, tools.workerId(), describe(error), !(error instanceof PermanentTaskFailure),
                                tools.backoff().delayAfter(task.attempt()))));
    }

    /**
     * A handler's result as the JSON text the task keeps, or a permanent failure saying why it
     * cannot be kept: one unstorable value would otherwise fail the statement of every outcome
     * written with it.
     */
    private Outcome success(Task task, Object result) {
        JsonNode tree = tools.json().valueToTree(result);
        String unstorable = StorableText.unstorable(tree);
        if (unstorable != null) {
            return Outcome.failure(task, tools.workerId(), "the result cannot be stored: a result " + unstorable,
                    false, Duration.ZERO);
        }
        String text = tools.json().writeValueAsString(tree);
        long bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > tools.maxResultBytes()) {
            return Outcome.failure(task, tools.workerId(), "the result is " + bytes + " bytes; the limit is "
                    + tools.maxResultBytes(), false, Duration.ZERO);
        }
        return Outcome.success(task, tools.workerId(), text);
    }

    private void releaseSlot(AtomicBoolean slotHeld) {
        if (slotHeld.compareAndSet(true, false)) {
            inFlight.decrementAndGet();
            if (moreMayWait) {
                kick();
            }
        }
    }

    private void kick() {
        kicks.emit(0L);
    }

    private static String describe(Throwable error) {
        String message = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
        return StorableText.sanitize(message, MAX_ERROR_LENGTH);
    }
}
