package dev.tasklane.client;

import java.net.InetAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.transport.ReceiverContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * A pull worker: claims tasks of the types it has handlers for from one queue with long polls,
 * runs at most {@code concurrency} at once, heartbeats their leases, and completes or fails each.
 * It claims only as many tasks as it has free slots, so every task it holds has started.
 *
 * <p>A handler runs only while the worker can vouch for its lease, as in-process handlers do:
 * it is stopped (cancelled; a blocking one interrupted) when a heartbeat is answered 404 or 409
 * (the task was cancelled, deleted or rescued: it is no longer this worker's), at the task's
 * {@code timeoutAt}, and when no heartbeat has succeeded for so long that the lease could end
 * within a margin (a fifth of it, at most 5 s): before the service could hand the task to anyone
 * else. A stopped handler's outcome is never sent; one it produced before the stop is, as a
 * stop applies to the handler's work, and the lease id fences an outcome that comes too late.
 * A timed-out attempt is failed by the service ({@code timed out after Ns}), as the lease ends
 * with it; a lost or lapsed lease is the service's to settle as well.
 *
 * <p>Interrupting a blocking handler does not end one that ignores the interruption: a stopped
 * blocking handler keeps its slot (it counts against {@code concurrency} and in {@link #held()})
 * until its thread leaves it.
 *
 * <p>{@link #stop(Duration)} stops claiming (the long poll in flight is abandoned, which the
 * service releases), lets running handlers finish within the grace, and then hands back what
 * is still running: the handlers are cancelled (a blocking one interrupted) and each task is
 * released once its handler has ended, back in the queue at once, counting neither an attempt
 * nor a snooze. A snooze of 0 s would count one: past {@code maxSnoozes} it fails the attempt,
 * and with {@code maxAttempts: 1} a graceful stop would fail the task for good. A task whose
 * blocking handler still runs 5 s after its interruption is not released, as another worker
 * would run it alongside: its heartbeats stop, and the service's rescuer queues it again when
 * its lease runs out, counting the attempt.
 */
public final class TasklaneWorker {

    private static final Logger log = LoggerFactory.getLogger(TasklaneWorker.class);
    private static final int MAX_CLAIM = 100;
    /** How long after its wait a long-poll claim may still answer. */
    private static final Duration CLAIM_ANSWER_MARGIN = Duration.ofSeconds(5);
    /** How long a stop waits for each handed-back handler to end, and then for its release's answer. */
    private static final Duration HAND_BACK_WAIT = Duration.ofSeconds(5);
    /** How often each attempt's deadlines are checked. */
    private static final Duration CHECK_EVERY = Duration.ofMillis(100);
    /** The largest margin before a lease ends at which its handler is stopped. */
    private static final Duration MAX_MARGIN = Duration.ofSeconds(5);
    /** The pull API's range of a claim's {@code leaseSeconds}. */
    private static final int MIN_LEASE_SECONDS = 1;
    private static final int MAX_LEASE_SECONDS = 43_200;
    /** The pull API's longest long poll. */
    private static final int MAX_WAIT_SECONDS = 30;

    private final TasklaneClient client;
    private final String queue;
    private final String workerId;
    private final int concurrency;
    private final int leaseSeconds;
    private final int waitSeconds;
    private final Map<String, Handler> handlers;
    private final ObservationRegistry observations;
    private final AtomicInteger held = new AtomicInteger();
    private final Map<Long, Attempt> running = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> stopClaiming = Sinks.empty();
    private final Sinks.Empty<Void> drained = Sinks.empty();
    private volatile Disposable pipeline;

    private TasklaneWorker(Builder builder) {
        this.client = builder.client;
        this.queue = builder.queue;
        this.workerId = builder.workerId != null ? builder.workerId : defaultWorkerId();
        this.concurrency = builder.concurrency;
        this.leaseSeconds = builder.leaseSeconds;
        this.waitSeconds = builder.waitSeconds;
        this.handlers = Map.copyOf(builder.handlers);
        this.observations = builder.observations;
    }

    public static Builder builder(TasklaneClient client, String queue) {
        return new Builder(client, queue);
    }

    public String workerId() {
        return workerId;
    }

    /** Starts claiming; returns at once. */
    public synchronized TasklaneWorker start() {
        if (pipeline != null) {
            throw new IllegalStateException("already started");
        }
        pipeline = claims()
                .takeUntilOther(stopClaiming.asMono())
                .flatMap(this::run, concurrency)
                .doFinally(signal -> drained.tryEmitEmpty())
                .subscribe(null, error -> log.error("Worker {} stopped on an error", workerId, error));
        log.info("Worker {} claims {} from queue {} ({} at once)", workerId, handlers.keySet(), queue, concurrency);
        return this;
    }

    /**
     * Stops claiming, waits up to {@code grace} for running handlers, then hands back the tasks
     * still running. Completes when every task is finished, handed back, or left to its lease
     * (its blocking handler may still run then, and counts in {@link #held()} until it ends).
     */
    public Mono<Void> stop(Duration grace) {
        return Mono.defer(() -> {
            stopClaiming.tryEmitEmpty();
            if (pipeline == null) {
                return Mono.empty();
            }
            return drained.asMono()
                    .timeout(grace, Mono.defer(this::handBack));
        });
    }

    /** How many slots are taken now: tasks claimed and running, and stopped handlers that still run. */
    public int held() {
        return held.get();
    }

    private Mono<Void> handBack() {
        // Stopped first: nothing a handler returns later is sent. Each task is released once its
        // handler has ended (run). One already stopped for a lost lease is not this worker's to
        // hand back, and one whose handler produced its outcome is recorded instead.
        int left = 0;
        for (Attempt attempt : running.values()) {
            if (attempt.stop(Attempt.Stop.HANDED_BACK)) {
                left++;
            }
        }
        log.info("Worker {} hands back {} running task(s)", workerId, left);
        // Each gets HAND_BACK_WAIT to end and as long for its release's answer; after that
        // nothing holds the stop, and what is left runs out its lease.
        return drained.asMono()
                .timeout(HAND_BACK_WAIT.multipliedBy(2).plusSeconds(1), Mono.empty())
                .doFinally(signal -> pipeline.dispose());
    }

    /** Claims as many tasks as there are free slots, again and again, until stopped. */
    private Flux<Attempt> claims() {
        TasklaneClient.Claim terms = TasklaneClient.Claim.by(workerId).withLeaseSeconds(leaseSeconds)
                .withWaitSeconds(waitSeconds).withTypes(handlers.keySet());
        return Flux.defer(() -> {
                    int free = Math.min(concurrency - held.get(), MAX_CLAIM);
                    if (free <= 0) {
                        return Mono.delay(Duration.ofMillis(20)).thenMany(Flux.empty());
                    }
                    long sent = System.nanoTime();
                    return client.claim(queue, terms.withMax(free))
                            // a long poll answers by its wait; one that does not is on a socket
                            // that stopped answering, and would leave the worker idle for ever
                            .timeout(Duration.ofSeconds(waitSeconds).plus(CLAIM_ANSWER_MARGIN))
                            .doOnNext(tasks -> held.addAndGet(tasks.size()))
                            .flatMapIterable(tasks -> {
                                long answered = System.nanoTime();
                                return tasks.stream()
                                        .map(task -> Attempt.claimed(task, Duration.ofSeconds(leaseSeconds), sent, answered))
                                        .toList();
                            })
                            .onErrorResume(error -> {
                                log.warn("Worker {} could not claim from {}: {}", workerId, queue, error.toString());
                                return Mono.delay(Duration.ofSeconds(1)).thenMany(Flux.empty());
                            });
                })
                .repeat();
    }

    private Mono<Void> run(Attempt attempt) {
        Task task = attempt.task();
        running.put(task.id(), attempt);
        ClaimedTask claimed = new ClaimedTask(task, client);
        Mono<Optional<Object>> work = traced(task, Mono.defer(() -> handlers.get(task.type()).run(claimed, attempt))
                .<Optional<Object>>map(Optional::of)
                .defaultIfEmpty(Optional.empty()))
                .doFinally(signal -> attempt.workEnded());
        // The handler's error decides the outcome; an error in recording it never does, or a
        // task whose "complete" was lost on the way would be failed and run again. A stop
        // cancels the handler, and what it returns after the stop is never sent; an outcome it
        // produced before the stop is sent all the same (a lease gone by then refuses it).
        Mono<Task> outcome = work
                .takeUntilOther(attempt.whenStopped())
                .map(result -> (Supplier<Mono<Task>>) () -> client.complete(task, result.orElse(null)))
                .onErrorResume(error -> Mono.just(() -> client.fail(task, message(error), !(error instanceof PermanentFailure))))
                .filter(record -> attempt.produced())
                .flatMap(record -> recorded(task, record));
        // Each beat gives up when the next is due, and the next goes at once: one that hung on
        // a socket that stopped answering would otherwise hold back every later beat until the
        // lease ran out. A tick that comes while a beat is still out waits for it (interval
        // without demand fails, and that error would stop the whole worker).
        Mono<Void> heartbeats = Flux.interval(heartbeatEvery())
                .onBackpressureLatest()
                .concatMap(beat -> heartbeat(attempt))
                .then();
        // On a timer of its own, apart from the heartbeats: whatever they are doing, a handler
        // whose lease may end is stopped in time.
        Mono<Void> deadlines = Flux.interval(CHECK_EVERY)
                .doOnNext(tick -> {
                    Attempt.Stop due = attempt.due(System.nanoTime(), margin(), CHECK_EVERY);
                    if (due != null) {
                        stop(attempt, due, due == Attempt.Stop.TIMED_OUT
                                ? "it reached its timeout of " + task.timeoutSeconds() + "s"
                                : "no heartbeat succeeded for nearly its lease, which may run out");
                    }
                })
                .then();
        // A task handed back keeps its heartbeats until it is released or left to its lease.
        Mono<Void> settled = outcome.then(Mono.defer(() -> attempt.stopped() == Attempt.Stop.HANDED_BACK
                ? handedBack(attempt) : Mono.empty()));
        return Mono.firstWithSignal(settled, heartbeats, deadlines)
                // A stopped blocking handler that ignores its interruption runs on, and a slot is
                // free only once it ends, or the worker would run more handlers than its concurrency.
                .doFinally(signal -> attempt.afterHandlerEnded(() -> {
                    running.remove(task.id(), attempt); // not a later attempt of the same task, claimed again meanwhile
                    held.decrementAndGet();
                }));
    }

    /**
     * Releases a task handed back on a stop once its handler has ended; the heartbeats keep its
     * lease meanwhile. A blocking handler that ignores its interruption for {@link #HAND_BACK_WAIT}
     * is not released, as another worker could then run the task alongside it: its heartbeats
     * stop, and the service's rescuer queues it again when its lease runs out.
     */
    private Mono<Void> handedBack(Attempt attempt) {
        Task task = attempt.task();
        Mono<Void> released = client.release(task, "worker " + workerId + " stopped")
                // a hand-back that gets no answer must not hold the stop for ever: the task's
                // lease runs out and the service queues it again
                .timeout(HAND_BACK_WAIT)
                .then()
                .onErrorResume(error -> {
                    log.warn("Could not hand back task {}: {}", task.id(), error.toString());
                    return Mono.empty();
                });
        return attempt.whenHandlerEnded().thenReturn(true)
                .timeout(HAND_BACK_WAIT, Mono.just(false))
                .flatMap(ended -> ended ? released : Mono.<Void>fromRunnable(() -> log.warn(
                        "Worker {} does not hand back task {}: its handler still runs {}s after its interruption;"
                                + " the task is queued again, its attempt counted, when its lease runs out",
                        workerId, task.id(), HAND_BACK_WAIT.toSeconds())));
    }

    /**
     * One heartbeat: a renewal extends the lease from when it was sent; a 404 or 409 says the
     * task is no longer this worker's (cancelled, deleted, rescued, or past its timeout), and
     * stops its handler.
     */
    private Mono<Void> heartbeat(Attempt attempt) {
        Task task = attempt.task();
        return Mono.defer(() -> {
                    long sent = System.nanoTime();
                    return client.heartbeat(task, leaseSeconds).timeout(heartbeatEvery())
                            .doOnNext(renewed -> attempt.renewed(sent, Duration.ofSeconds(leaseSeconds)));
                })
                .then()
                .onErrorResume(error -> {
                    if (error instanceof TasklaneException problem && (problem.status() == 404 || problem.status() == 409)) {
                        stop(attempt, Attempt.Stop.LEASE_LOST, "its heartbeat was answered " + problem.status()
                                + ", so the task is no longer this worker's");
                    } else {
                        log.warn("Heartbeat of task {} failed: {}", task.id(), error.toString());
                    }
                    return Mono.empty();
                });
    }

    private void stop(Attempt attempt, Attempt.Stop reason, String why) {
        if (attempt.stop(reason)) {
            log.warn("Worker {} stopped the handler of task {}: {}; its outcome will not be sent", workerId,
                    attempt.task().id(), why);
        }
    }

    /**
     * Sends an outcome until the service answers it: again, with backoff, after a network error,
     * a 502/503/504, or no answer within a heartbeat period (a socket that stopped answering),
     * for up to one lease period (heartbeats keep the lease meanwhile; after it, the lease expires
     * and the service runs the task again). A 409 on a later try most likely answers an earlier
     * try that was carried out but whose answer was lost.
     */
    private Mono<Task> recorded(Task task, Supplier<Mono<Task>> record) {
        AtomicInteger tries = new AtomicInteger();
        return Mono.defer(() -> {
                    tries.incrementAndGet();
                    return record.get().timeout(heartbeatEvery());
                })
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(5))
                        .filter(TasklaneClient::transientFailure))
                .timeout(Duration.ofSeconds(leaseSeconds))
                .onErrorResume(error -> {
                    if (tries.get() > 1 && error instanceof TasklaneException problem && problem.status() == 409) {
                        log.info("Worker {}: task {} was no longer ours on try {} of its outcome, most likely since an"
                                + " earlier try was recorded and its answer lost", workerId, task.id(), tries.get());
                    } else {
                        // 409: the lease was lost (expired and rescued, or the task cancelled).
                        log.warn("Worker {} could not record the outcome of task {} in {} tries: {}", workerId, task.id(),
                                tries.get(), error.toString());
                    }
                    return Mono.empty();
                });
    }

    /**
     * The handler inside an observation that continues the task's trace: the task's
     * {@code traceparent} is its remote parent (read by the tracing bridge's propagator, as from
     * a message), and spans the handler makes, and its calls through an instrumented client, are
     * its children.
     */
    private <T> Mono<T> traced(Task task, Mono<T> work) {
        if (observations.isNoop()) {
            return work;
        }
        return Mono.defer(() -> {
            ReceiverContext<Task> context = new ReceiverContext<>(
                    (carrier, key) -> "traceparent".equals(key) ? carrier.traceparent() : null);
            context.setCarrier(task);
            context.setRemoteServiceName("tasklane");
            Observation observation = Observation.createNotStarted("tasklane.task.process", () -> context, observations)
                    .contextualName("process " + task.type())
                    .lowCardinalityKeyValue("tasklane.queue", task.queue())
                    .lowCardinalityKeyValue("tasklane.task.type", task.type())
                    .highCardinalityKeyValue("tasklane.task.id", Long.toString(task.id()))
                    .start();
            return work.doOnError(observation::error)
                    .doFinally(signal -> observation.stop())
                    .contextWrite(reactor.util.context.Context.of(ObservationThreadLocalAccessor.KEY, observation));
        });
    }

    private Duration heartbeatEvery() {
        return Duration.ofMillis(Math.max(500, leaseSeconds * 1000L / 3));
    }

    /** How long before its lease may end a handler is stopped: a fifth of the lease, at most 5 s. */
    private Duration margin() {
        Duration fifth = Duration.ofSeconds(leaseSeconds).dividedBy(5);
        return fifth.compareTo(MAX_MARGIN) > 0 ? MAX_MARGIN : fifth;
    }

    private static String message(Throwable error) {
        String text = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
        return text.length() > 4000 ? text.substring(0, 4000) : text;
    }

    /** A handler of one task type as the worker runs it, telling the attempt when it really ends. */
    @FunctionalInterface
    private interface Handler {

        Mono<?> run(ClaimedTask task, Attempt attempt);
    }

    private static String defaultWorkerId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "worker";
        }
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** How a worker is made: at least one handler. */
    public static final class Builder {

        private final TasklaneClient client;
        private final String queue;
        private final Map<String, Handler> handlers = new LinkedHashMap<>();
        private String workerId;
        private int concurrency = 8;
        private int leaseSeconds = 30;
        private int waitSeconds = 20;
        private ObservationRegistry observations = ObservationRegistry.NOOP;

        private Builder(TasklaneClient client, String queue) {
            this.client = client;
            this.queue = queue;
        }

        /** A non-blocking handler of one task type. */
        public Builder handler(String type, TaskHandler handler) {
            handlers.put(type, (task, attempt) -> handler.handle(task));
            return this;
        }

        /** A blocking handler of one task type: it runs on a thread that may block, never an event loop. */
        public Builder blockingHandler(String type, BlockingTaskHandler handler) {
            // A stop cancels the Mono and interrupts the thread, but the handler ends only when
            // its thread leaves it; one cancelled before its thread took it up never begins.
            handlers.put(type, (task, attempt) -> Mono.fromCallable(() -> {
                        if (!attempt.handlerBegins()) {
                            return null;
                        }
                        try {
                            return handler.handle(task);
                        } finally {
                            attempt.handlerEnded();
                        }
                    })
                    .subscribeOn(Schedulers.boundedElastic()));
            return this;
        }

        /** The id the service knows this worker by (host name and a random suffix by default). */
        public Builder workerId(String value) {
            this.workerId = value;
            return this;
        }

        /** How many tasks run at once (8). */
        public Builder concurrency(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1");
            }
            this.concurrency = value;
            return this;
        }

        /** The lease each claim takes (30 s; 1..43,200), renewed every third of it while the handler runs. */
        public Builder leaseSeconds(int value) {
            this.leaseSeconds = value;
            return this;
        }

        /** How long one long poll waits for a task (20 s; 0..30). */
        public Builder waitSeconds(int value) {
            this.waitSeconds = value;
            return this;
        }

        /**
         * Where each task's handling is observed (Micrometer; with a tracing bridge, a span that
         * continues the task's trace). None by default.
         */
        public Builder observationRegistry(ObservationRegistry value) {
            this.observations = value;
            return this;
        }

        /**
         * The worker. Values the pull API would refuse fail here: the service would answer every
         * claim 422, and the worker would retry for ever without claiming a task.
         */
        public TasklaneWorker build() {
            if (handlers.isEmpty()) {
                throw new IllegalStateException("a worker needs at least one handler");
            }
            if (leaseSeconds < MIN_LEASE_SECONDS || leaseSeconds > MAX_LEASE_SECONDS) {
                throw new IllegalArgumentException("leaseSeconds must be " + MIN_LEASE_SECONDS + ".." + MAX_LEASE_SECONDS
                        + ": " + leaseSeconds);
            }
            if (waitSeconds < 0 || waitSeconds > MAX_WAIT_SECONDS) {
                throw new IllegalArgumentException("waitSeconds must be 0.." + MAX_WAIT_SECONDS + ": " + waitSeconds);
            }
            return new TasklaneWorker(this);
        }
    }
}
