package dev.tasklane.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tasklane.queue.Claim;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.SerializedSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.NullNode;

/**
 * The pipeline of one in-process queue. It claims only what it has room for (its free slots, in
 * one statement), runs up to {@code concurrency} handlers at once, and hands their outcomes to
 * the shared completer. A slot frees when its handler ends, not when the outcome is written, so
 * the next claim overlaps the write (up to {@code concurrency} outcomes may wait for it); the task
 * stays tracked, its lease renewed, until the write, and a drain waits for it. Claims are triggered by wake-ups (an enqueue here or, by NOTIFY,
 * elsewhere; a retry or delayed task coming due; a slot freeing up) and by a slow safety poll.
 */
final class QueueWorker {

    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);
    private static final int MAX_ERROR_LENGTH = 4000;

    private final QueueSpec spec;
    private final Workers owner;
    private final TaskStore store;
    private final HandlerRegistry handlers;
    private final Batcher<Outcome, Void> completer;
    private final Wakeups wakeups;
    private final Backoff backoff;
    private final JsonMapper json;
    private final Duration lease;
    private final Duration pollInterval;
    private final AtomicInteger inFlight = new AtomicInteger(); // handlers running: the slots taken
    private final AtomicInteger awaitingCommit = new AtomicInteger(); // outcomes handed to the completer
    private final SerializedSink<Long> kicks = new SerializedSink<>();
    private volatile boolean draining;
    private volatile Disposable pipeline = Flux.never().subscribe();

    QueueWorker(QueueSpec spec, Workers owner, TaskStore store, HandlerRegistry handlers,
                Batcher<Outcome, Void> completer, Wakeups wakeups, Backoff backoff, JsonMapper json, Duration lease,
                Duration pollInterval) {
        this.spec = spec;
        this.owner = owner;
        this.store = store;
        this.handlers = handlers;
        this.completer = completer;
        this.wakeups = wakeups;
        this.backoff = backoff;
        this.json = json;
        this.lease = lease;
        this.pollInterval = pollInterval;
    }

    String queue() {
        return spec.queue();
    }

    int inFlight() {
        return inFlight.get();
    }

    void start() {
        draining = false;
        Flux<Long> dueSoon = wakeups.of(spec.queue()).flatMap(wakeup -> {
            Duration delay = wakeup.delay();
            if (delay.isZero()) {
                return Mono.just(0L);
            }
            // A task due within the next poll gets a timer of its own; later ones the poll finds.
            return delay.compareTo(pollInterval) < 0 ? Mono.delay(delay) : Mono.empty();
        });
        Flux<Long> ticks = Flux.merge(Flux.interval(Duration.ZERO, pollInterval).onBackpressureDrop(), dueSoon,
                wakeups.missedWakeups().map(reconnected -> 0L), kicks.asFlux());
        pipeline = ticks
                .onBackpressureLatest()
                .concatMap(tick -> claimFreeSlots(), 1)
                .flatMap(this::run, Integer.MAX_VALUE) // bounded by the claims, never above concurrency
                .subscribe();
    }

    /** Claims no more; running handlers go on. */
    void drain() {
        draining = true;
    }

    void stop() {
        pipeline.dispose();
    }

    private Flux<Task> claimFreeSlots() {
        int free = spec.concurrency() - inFlight.get();
        if (free <= 0 || draining) {
            return Flux.empty();
        }
        Set<String> types = handlers.types();
        return store.claim(new Claim(spec.queue(), owner.workerId(), free, lease, types))
                .collectList()
                .flatMapMany(tasks -> {
                    inFlight.addAndGet(tasks.size());
                    if (tasks.size() == free) {
                        kick(); // there may be more waiting: look again as soon as a slot frees
                    }
                    return Flux.fromIterable(tasks);
                })
                .onErrorResume(e -> {
                    log.warn("Claim on queue {} failed: {}", spec.queue(), e.toString());
                    return Flux.empty();
                });
    }

    private Mono<Void> run(Task task) {
        RunningTask running = owner.track(task, lease);
        AtomicBoolean slotHeld = new AtomicBoolean(true);
        return handlers.handler(task.type())
                .map(handler -> Mono.defer(() -> attempt(handler, task)))
                .orElseGet(() -> Mono.just(Outcome.failure(task, owner.workerId(),
                        "no handler for type " + task.type(), true, backoff.delayAfter(task.attempt()))))
                .takeUntilOther(running.whenStopped())
                .doOnNext(outcome -> {
                    if (!outcome.succeeded()) {
                        TaskLog.info(log, task, owner.workerId(), "Attempt {} of task {} failed ({}): {}",
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
                    return completer.submit(outcome).thenReturn(outcome)
                            .doFinally(signal -> awaitingCommit.decrementAndGet());
                })
                .doOnNext(this::wakeForRetry)
                .onErrorResume(e -> {
                    // The lease runs out and the rescuer puts the task back; nothing is lost.
                    TaskLog.warn(log, task, owner.workerId(), "Outcome of task {} not recorded: {}", task.id(),
                            e.toString());
                    return Mono.empty();
                })
                .doFinally(signal -> {
                    owner.untrack(task.id()); // only now: a drain waits for outcomes to be written
                    releaseSlot(slotHeld);
                })
                .then();
    }

    private Mono<Outcome> attempt(TaskHandler handler, Task task) {
        JsonNode payload = task.payload() == null ? NullNode.getInstance() : json.readTree(task.payload());
        AttemptContext context = new AttemptContext(task, payload, owner.workerId(), store);
        return Mono.defer(() -> handler.handle(context))
                .map(result -> Outcome.success(task, owner.workerId(), json.writeValueAsString(result)))
                .switchIfEmpty(Mono.fromSupplier(() -> Outcome.success(task, owner.workerId(), null)))
                .onErrorResume(error -> Mono.just(Outcome.failure(task, owner.workerId(), describe(error),
                        !(error instanceof PermanentTaskFailure), backoff.delayAfter(task.attempt()))));
    }

    private void wakeForRetry(Outcome outcome) {
        if (!outcome.succeeded() && outcome.retryable()) {
            wakeups.wake(spec.queue(), Instant.now().plus(outcome.retryDelay()));
        }
    }

    private void releaseSlot(AtomicBoolean slotHeld) {
        if (slotHeld.compareAndSet(true, false)) {
            inFlight.decrementAndGet();
            kick();
        }
    }

    private void kick() {
        kicks.emit(0L);
    }

    private static String describe(Throwable error) {
        String message = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
        return message.length() > MAX_ERROR_LENGTH ? message.substring(0, MAX_ERROR_LENGTH) : message;
    }
}
