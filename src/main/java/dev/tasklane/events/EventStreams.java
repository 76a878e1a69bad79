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
        Gauge.builder("tasklane.events.live.subscribers", log, EventLog::subscribers)
                .description("Subscriptions to this replica's live event stream").register(meters);
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
     * buffers) before the replay reads the horizon, so an event delivered while the replay runs
     * is not missed; ids at or below what was already sent are dropped, so none is sent twice.
     * A break in the live stream's chain of ids (this subscriber had no demand, or its buffer
     * overflowed) sends it back to the table from the last event it sent.
     *
     * @param after the cursor; below zero means "from now on"
     * @param replay events after a cursor, up to the reader's horizon at that moment
     */
    private Flux<TaskEvent> replayThenLive(long after, Predicate<TaskEvent> filter,
                                           BiFunction<Long, Long, Flux<TaskEvent>> replay) {
        return Flux.defer(() -> {
            AtomicLong lastSent = new AtomicLong(after);
            AtomicLong lastLive = new AtomicLong(NONE);
            AtomicLong horizonUsed = new AtomicLong(NONE);
            Sinks.One<Boolean> liveSubscribed = Sinks.one();
            Flux<LiveEvent> live = log.live()
                    .onBackpressureBuffer(LIVE_BUFFER, dropped -> { }, BufferOverflowStrategy.ERROR)
                    .doOnSubscribe(s -> liveSubscribed.tryEmitValue(true));
            Flux<LiveEvent> history = log.horizon().flatMapMany(horizon -> {
                horizonUsed.set(horizon);
                if (lastSent.get() < 0) {
                    lastSent.set(horizon);
                    return Flux.<TaskEvent>empty();
                }
                return replay.apply(lastSent.get(), horizon);
            }).map(event -> new LiveEvent(event, LiveEvent.REPLAYED)).delaySubscription(liveSubscribed.asMono());
            return Flux.mergeSequential(history, live)
                    .<TaskEvent>handle((item, sink) -> {
                        if (item.previousId() != LiveEvent.REPLAYED) {
                            long expected = lastLive.get();
                            boolean broken = expected == NONE
                                    ? item.previousId() > Math.max(horizonUsed.get(), lastSent.get())
                                    : item.previousId() != expected;
                            if (broken) {
                                sink.error(new MissedLiveEvents());
                                return;
                            }
                            lastLive.set(item.event().id());
                            if (!filter.test(item.event())) {
                                return;
                            }
                        }
                        if (item.event().id() > lastSent.get()) {
                            lastSent.set(item.event().id());
                            sink.next(item.event());
                        }
                    })
                    .onErrorResume(e -> Exceptions.isOverflow(e) || e instanceof MissedLiveEvents, missed -> {
                        catchups.increment();
                        return replayThenLive(lastSent.get(), filter, replay);
                    });
        });
    }

    private static final long NONE = Long.MIN_VALUE;

    /** The live stream skipped events for this subscriber. */
    private static final class MissedLiveEvents extends RuntimeException {

        MissedLiveEvents() {
            super("missed live events", null, false, false);
        }
    }
}
