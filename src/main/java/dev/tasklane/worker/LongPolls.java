package dev.tasklane.worker;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.queue.Claim;
import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;

/**
 * The long polls waiting on this replica, served by one claimer per queue: a wake-up costs one
 * claim for the longest-waiting poll, not one claim per waiting poll, so that a herd of pollers
 * does not turn every enqueue into a burst of claims (which starved the pool before).
 *
 * <p>A round goes through the queue's polls in arrival order and claims for each in turn until a
 * claim comes back short: the queue is then drained for that poll's types, and polls asking for
 * the same types wait for the next round. A round that leaves polls waiting sets a timer to the
 * queue's next due time. Rounds of one queue never overlap; wake-ups during a round make one more.
 * Every claim goes through the {@link ClaimHandoff}: a poll that ends while its claim runs (its
 * deadline, its client gone, the drain) gets nothing, and its tasks go back to queued at once.
 */
final class LongPolls {

    static final String DEADLINE = "released: the long poll's deadline passed while its claim ran";
    static final String HUNG_UP = "released: the claiming request was cancelled before its claim returned";
    static final String DRAINING = "released: the replica began draining while the claim ran";

    private static final Logger log = LoggerFactory.getLogger(LongPolls.class);
    private static final Duration SAFETY_POLL = Duration.ofSeconds(2);
    private static final Retry AGAIN = Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(5));
    private static final Duration CLAIM_GRACE = Duration.ofSeconds(1);
    private static final Object DELIVERED = new Object();

    private final TaskStore store;
    private final ClaimHandoff handoff;
    private final Wakeups wakeups;
    private final Scheduler clock;
    private final Map<String, QueuePolls> byQueue = new ConcurrentHashMap<>();
    private volatile Disposable triggers = Disposables.disposed();

    LongPolls(TaskStore store, ClaimHandoff handoff, Wakeups wakeups, Scheduler clock) {
        this.store = store;
        this.handoff = handoff;
        this.wakeups = wakeups;
        this.clock = clock;
    }

    void start() {
        Disposable.Composite started = Disposables.composite();
        // Listened to again after a failure (a bug, say), or every long poll would wait for the
        // safety poll from then on.
        started.add(wakeups.all()
                .doOnNext(wakeup -> {
                    QueuePolls polls = byQueue.get(wakeup.queue());
                    if (polls != null) {
                        polls.wake(wakeup.delay());
                    }
                })
                .doOnError(e -> log.error("Wake-ups for long polls failed; listening again", e))
                .retryWhen(AGAIN)
                .subscribe());
        started.add(Flux.merge(wakeups.missedWakeups().map(reconnected -> 0L),
                        Flux.interval(SAFETY_POLL, SAFETY_POLL, clock).onBackpressureDrop())
                .doOnNext(tick -> byQueue.values().forEach(QueuePolls::trigger))
                .doOnError(e -> log.error("The long polls' safety poll failed; starting it again", e))
                .retryWhen(AGAIN)
                .subscribe());
        triggers = started;
    }

    void stop() {
        triggers.dispose();
    }

    /** Waits up to {@code wait} for tasks, answering as soon as a claim for this poll gets some. */
    Mono<List<Task>> claim(Claim claim, Duration wait, Mono<Void> draining) {
        return Mono.defer(() -> {
            Poll poll = new Poll(claim);
            Mono<List<Task>> drained = draining.then(Mono.defer(() -> {
                poll.end(DRAINING);
                return poll.result();
            }));
            return Mono.firstWithSignal(poll.result(), drained)
                    .timeout(wait, Mono.defer(() -> {
                        // A claim already running for this poll gets a moment to return, so that
                        // the poll answers with its tasks rather than releasing them.
                        Mono<List<Task>> ended = Mono.fromRunnable(() -> poll.end(DEADLINE)).then(poll.result());
                        return poll.claiming() ? poll.result().timeout(CLAIM_GRACE, ended, clock) : ended;
                    }), clock)
                    .doOnSubscribe(subscription -> byQueue.compute(claim.queue(), (queue, polls) -> {
                        QueuePolls open = polls == null ? new QueuePolls(queue) : polls;
                        open.add(poll);
                        return open;
                    }).trigger())
                    .doOnCancel(() -> poll.end(HUNG_UP))
                    .doFinally(signal -> byQueue.computeIfPresent(claim.queue(), (queue, polls) -> polls.remove(poll)));
        });
    }

    /** One waiting long poll: it gets its tasks, or ends (and any tasks claimed for it later are released). */
    private static final class Poll {

        private final Claim claim;
        private final Sinks.One<List<Task>> result = Sinks.one();
        // null while waiting; then DELIVERED, or why it stopped waiting
        private final AtomicReference<Object> state = new AtomicReference<>();
        private volatile boolean claiming;

        Poll(Claim claim) {
            this.claim = claim;
        }

        boolean waiting() {
            return state.get() == null;
        }

        /** Whether a claim for this poll is running now. */
        boolean claiming() {
            return claiming;
        }

        boolean offer(List<Task> tasks) {
            if (state.compareAndSet(null, DELIVERED)) {
                result.tryEmitValue(tasks);
                return true;
            }
            return false;
        }

        void end(String reason) {
            if (state.compareAndSet(null, reason)) {
                result.tryEmitValue(List.of());
            }
        }

        String endReason() {
            Object ended = state.get();
            return ended instanceof String reason ? reason : HUNG_UP;
        }

        Mono<List<Task>> result() {
            return result.asMono();
        }
    }

    /** The polls of one queue and its claimer. */
    private final class QueuePolls {

        private final String queue;
        private final ConcurrentLinkedQueue<Poll> polls = new ConcurrentLinkedQueue<>();
        private final AtomicInteger triggered = new AtomicInteger();
        private final DueTimer dueTimer = new DueTimer(clock);
        private final Disposable timerFires;

        QueuePolls(String queue) {
            this.queue = queue;
            this.timerFires = dueTimer.fires().subscribe(fire -> trigger());
        }

        void add(Poll poll) {
            polls.add(poll);
        }

        /** This set without {@code poll}, or null (forgotten) once no poll waits. */
        QueuePolls remove(Poll poll) {
            polls.remove(poll);
            if (polls.isEmpty()) {
                dueTimer.cancel();
                timerFires.dispose();
                return null;
            }
            return this;
        }

        void wake(Duration delay) {
            if (delay.isZero()) {
                trigger();
            } else {
                dueTimer.after(delay);
            }
        }

        /** Runs a round now, or one more after the round running now. */
        void trigger() {
            if (triggered.getAndIncrement() == 0) {
                runRounds();
            }
        }

        private void runRounds() {
            int seen = triggered.get();
            // Owned here, like a timer: a round is never cancelled half-way (the hand-off would
            // release what it claimed), and its end starts the next one if triggers came meanwhile.
            round().doFinally(signal -> {
                if (triggered.addAndGet(-seen) != 0) {
                    runRounds();
                }
            }).subscribe();
        }

        private Mono<Void> round() {
            Set<Set<String>> drained = new HashSet<>();
            return Flux.fromIterable(List.copyOf(polls))
                    .concatMap(poll -> {
                        if (!poll.waiting() || drained.contains(Set.of()) || drained.contains(poll.claim.types())) {
                            return Mono.empty();
                        }
                        poll.claiming = true;
                        return handoff.claim(store, poll.claim, poll::endReason)
                                .doFinally(signal -> poll.claiming = false)
                                .flatMap(tasks -> {
                                    if (tasks.size() < poll.claim.limit()) {
                                        drained.add(poll.claim.types());
                                    }
                                    if (tasks.isEmpty() || poll.offer(tasks)) {
                                        return Mono.<Void>empty();
                                    }
                                    return handoff.release(store, queue, java.util.Objects.requireNonNull(tasks.get(0).leaseId()),
                                            poll.endReason());
                                })
                                .onErrorResume(e -> {
                                    log.warn("Long-poll claim on queue {} failed: {}", queue, e.toString());
                                    drained.add(Set.of());
                                    return Mono.empty();
                                });
                    })
                    .then(Mono.defer(() -> polls.stream().anyMatch(Poll::waiting)
                            ? store.nextDue(queue, Set.of()).doOnNext(dueTimer::after).then()
                                    .onErrorResume(e -> Mono.empty())
                            : Mono.empty()));
        }
    }
}
