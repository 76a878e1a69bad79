package dev.tasklane.events;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;
import reactor.core.Exceptions;
import reactor.core.publisher.BufferOverflowStrategy;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The event streams subscribers read: a replay from the table after their cursor, then the
 * replica's live stream, with nothing lost or repeated in between. A subscriber that does not
 * keep up holds at most {@link #LIVE_BUFFER} live events; past that it drops the live feed and
 * catches up from the table (which costs reads, not memory), then goes live again.
 */
@Component
public final class EventStreams {

    /** Live events one subscriber may hold before it is switched to catching up from the table. */
    public static final int LIVE_BUFFER = 512;

    private final EventLog log;
    private final AtomicInteger taskSubscribers = new AtomicInteger();
    private final AtomicInteger queueSubscribers = new AtomicInteger();
    private final Counter sent;
    private final Counter catchups;

    EventStreams(EventLog log, MeterRegistry meters) {
        this.log = log;
        Gauge.builder("tasklane.sse.subscribers", taskSubscribers, AtomicInteger::get).tag("stream", "task")
                .description("Open task event streams").register(meters);
        Gauge.builder("tasklane.sse.subscribers", queueSubscribers, AtomicInteger::get).tag("stream", "queue")
                .description("Open event streams of all tasks or one queue").register(meters);
        this.sent = Counter.builder("tasklane.sse.events.sent").description("Events sent to subscribers")
                .register(meters);
        this.catchups = Counter.builder("tasklane.sse.catchups")
                .description("Subscribers that fell behind and were caught up from the table").register(meters);
    }

    /**
     * One task's events after {@code after}: its history, then live ones. Ends after a terminal
     * event that is the task's latest, since nothing follows it unless the task is retried.
     *
     * @param lastEventId the id of the task's latest event when the stream was opened
     */
    public Flux<TaskEvent> task(long taskId, long after, long lastEventId) {
        return replayThenLive(after, e -> e.taskId() == taskId, (cursor, horizon) -> log.ofTask(taskId, cursor))
                .takeUntil(e -> e.terminal() && e.id() >= lastEventId)
                .doOnSubscribe(s -> taskSubscribers.incrementAndGet())
                .doFinally(s -> taskSubscribers.decrementAndGet())
                .doOnNext(e -> sent.increment());
    }

    /**
     * Every event matching {@code filter}: after {@code after}, or from now on when it is null.
     */
    public Flux<TaskEvent> all(Long after, Predicate<TaskEvent> filter) {
        return replayThenLive(after == null ? -1 : after, filter,
                        (cursor, horizon) -> log.range(cursor, horizon).filter(filter))
                .doOnSubscribe(s -> queueSubscribers.incrementAndGet())
                .doFinally(s -> queueSubscribers.decrementAndGet())
                .doOnNext(e -> sent.increment());
    }

    /**
     * Replays from the table, then follows the live stream. The live stream is subscribed (and
     * buffers) before the replay starts, so an event delivered while the replay runs is not
     * missed; ids at or below what was already sent are dropped, so none is sent twice.
     *
     * @param after the cursor; below zero means "from now on"
     * @param replay events after a cursor, up to the reader's horizon at that moment
     */
    private Flux<TaskEvent> replayThenLive(long after, Predicate<TaskEvent> filter,
                                           BiFunction<Long, Long, Flux<TaskEvent>> replay) {
        return Flux.defer(() -> {
            AtomicLong lastSent = new AtomicLong(after);
            Sinks.One<Boolean> liveSubscribed = Sinks.one();
            Flux<TaskEvent> live = log.live().filter(filter)
                    .onBackpressureBuffer(LIVE_BUFFER, dropped -> { }, BufferOverflowStrategy.ERROR)
                    .doOnSubscribe(s -> liveSubscribed.tryEmitValue(true));
            Flux<TaskEvent> history = log.horizon().flatMapMany(horizon -> {
                if (lastSent.get() < 0) {
                    lastSent.set(horizon);
                    return Flux.<TaskEvent>empty();
                }
                return replay.apply(lastSent.get(), horizon);
            }).delaySubscription(liveSubscribed.asMono());
            return Flux.mergeSequential(history, live)
                    .filter(e -> e.id() > lastSent.get())
                    .doOnNext(e -> lastSent.set(e.id()))
                    .onErrorResume(Exceptions::isOverflow, overflow -> {
                        catchups.increment();
                        return replayThenLive(lastSent.get(), filter, replay);
                    });
        });
    }
}
