package dev.tasklane.events;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.r2dbc.spi.R2dbcException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;
import reactor.core.publisher.BufferOverflowStrategy;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
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

    private static final Logger log = LoggerFactory.getLogger(EventStreams.class);
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final EventLog eventLog;
    private final AtomicInteger taskSubscribers = new AtomicInteger();
    private final AtomicInteger queueSubscribers = new AtomicInteger();
    private final Counter sent;
    private final Counter catchups;
    private final Counter liveDropped;

    EventStreams(EventLog eventLog, MeterRegistry meters) {
        this.eventLog = eventLog;
        Gauge.builder("tasklane.sse.subscribers", taskSubscribers, AtomicInteger::get).tag("stream", "task")
                .description("Open task event streams").register(meters);
        Gauge.builder("tasklane.sse.subscribers", queueSubscribers, AtomicInteger::get).tag("stream", "queue")
                .description("Open event streams of all tasks or one queue").register(meters);
        this.sent = Counter.builder("tasklane.sse.events.sent").description("Events sent to subscribers")
                .register(meters);
        Gauge.builder("tasklane.events.live.subscribers", eventLog, EventLog::subscribers)
                .description("Subscriptions to this replica's live event stream").register(meters);
        Gauge.builder("tasklane.events.horizon.lag", eventLog, EventLog::horizonLag)
                .description("Events appended but not yet delivered on this replica's live stream").register(meters);
        this.catchups = Counter.builder("tasklane.sse.catchups")
                .description("Subscribers that fell behind and were caught up from the table").register(meters);
        this.liveDropped = Counter.builder("tasklane.sse.live.dropped")
                .description("Live events not kept for subscribers whose buffer was full; they read them from the table")
                .register(meters);
    }

    /**
     * One task's events after {@code after}: its history, then live ones. Ends after a terminal
     * event that is the task's latest, since nothing follows it unless the task is retried.
     * Retention prunes a task's events only with the task, so this stream never has a gap.
     *
     * @param lastEventId the id of the task's latest event when the stream was opened
     */
    public Flux<TaskEvent> task(long taskId, long after, long lastEventId) {
        return replayThenLive(after, false, e -> e.taskId() == taskId, (cursor, horizon) -> eventLog.ofTask(taskId, cursor))
                .cast(TaskEvent.class)
                .takeUntil(e -> e.terminal() && e.id() >= lastEventId)
                .doOnSubscribe(s -> taskSubscribers.incrementAndGet())
                .doFinally(s -> taskSubscribers.decrementAndGet())
                .doOnNext(e -> sent.increment());
    }

    /**
     * Every event matching {@code filter}: after {@code after}, or from now on when it is null.
     * A {@link Gap} comes first where retention pruned events after the cursor.
     */
    public Flux<StreamItem> all(@Nullable Long after, Predicate<TaskEvent> filter) {
        return replayThenLive(after == null ? -1 : after, true, filter,
                        (cursor, horizon) -> eventLog.range(cursor, horizon).filter(filter))
                .doOnSubscribe(s -> queueSubscribers.incrementAndGet())
                .doFinally(s -> queueSubscribers.decrementAndGet())
                .doOnNext(e -> sent.increment());
    }

    /**
     * Replays from the table, then follows the live stream. The live stream is subscribed (and
     * buffers) before the replay reads the horizon, so an event delivered while the replay runs
     * is not missed; ids at or below what was already sent are dropped, so none is sent twice.
     *
     * <p>A subscriber that stops reading keeps at most {@link #LIVE_BUFFER} live events; the
     * rest are dropped, which costs it nothing until it reads again: then the break in the live
     * stream's chain of ids sends it back to the table from the last event it sent. A replay that
     * fails (the database is away) is tried again from there after a pause; the stream stays open.
     *
     * @param after the cursor; below zero means "from now on"
     * @param gapsPossible whether retention may have pruned events this stream would send
     * @param replay events after a cursor, up to the reader's horizon at that moment
     */
    private Flux<StreamItem> replayThenLive(long after, boolean gapsPossible, Predicate<TaskEvent> filter,
                                            BiFunction<Long, Long, Flux<TaskEvent>> replay) {
        return Flux.defer(() -> {
            AtomicLong lastSent = new AtomicLong(after);
            AtomicLong lastLive = new AtomicLong(NONE);
            AtomicLong horizonUsed = new AtomicLong(NONE);
            Sinks.One<Boolean> liveSubscribed = Sinks.one();
            Flux<StreamItem> gap = gapsPossible && after >= 0
                    ? eventLog.prunedThrough().filter(pruned -> pruned > after).<StreamItem>map(Gap::new).flux()
                    : Flux.empty();
            // The first drop leaves a mark that reaches the subscriber when it reads again.
            Sinks.One<LiveEvent> overflowed = Sinks.one();
            Flux<LiveEvent> live = Flux.merge(
                    matching(eventLog.live(), filter)
                            .onBackpressureBuffer(LIVE_BUFFER, dropped -> {
                                liveDropped.increment();
                                overflowed.tryEmitValue(new LiveEvent(dropped.event(), LiveEvent.OVERFLOWED));
                            }, BufferOverflowStrategy.DROP_LATEST)
                            .doOnSubscribe(s -> liveSubscribed.tryEmitValue(true)),
                    overflowed.asMono());
            Flux<LiveEvent> history = eventLog.horizon().flatMapMany(horizon -> {
                horizonUsed.set(horizon);
                if (lastSent.get() < 0) {
                    lastSent.set(horizon);
                    return Flux.<TaskEvent>empty();
                }
                return replay.apply(lastSent.get(), horizon);
            }).map(event -> new LiveEvent(event, LiveEvent.REPLAYED)).delaySubscription(liveSubscribed.asMono());
            Flux<StreamItem> events = Flux.mergeSequential(history, live)
                    .handle((item, sink) -> {
                        if (item.previousId() == LiveEvent.OVERFLOWED) {
                            sink.error(new MissedLiveEvents());
                            return;
                        }
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
                        }
                        if (item.event().id() > lastSent.get()) {
                            lastSent.set(item.event().id());
                            sink.next(item.event());
                        }
                    });
            return gap.concatWith(events)
                    .onErrorResume(MissedLiveEvents.class::isInstance, missed -> {
                        catchups.increment();
                        return replayThenLive(lastSent.get(), gapsPossible, filter, replay);
                    })
                    .onErrorResume(EventStreams::databaseFailure, failure -> {
                        log.warn("Event stream lost the database, trying again: {}", failure.toString());
                        return Mono.delay(RETRY_PAUSE)
                                .thenMany(replayThenLive(lastSent.get(), gapsPossible, filter, replay));
                    });
        });
    }

    /**
     * The live events this subscriber wants, each linked to the one it got before (the first to
     * the live stream's position when it subscribed), so that its buffer holds only what it will
     * send and a break in the chain still shows. The live stream gives every event, in order, to
     * a subscriber with demand, and the buffer behind this always has demand: a break here means
     * the live stream itself skipped, and is passed on as a missed-events mark.
     */
    private static Flux<LiveEvent> matching(Flux<LiveEvent> live, Predicate<TaskEvent> filter) {
        return Flux.defer(() -> {
            long[] lastSeen = {NONE}; // confined to the live stream's one emitting reader
            long[] linkTo = {NONE};
            return live.handle((item, sink) -> {
                if (lastSeen[0] != NONE && item.previousId() != lastSeen[0]) {
                    sink.next(new LiveEvent(item.event(), LiveEvent.OVERFLOWED));
                    return;
                }
                if (linkTo[0] == NONE) {
                    linkTo[0] = item.previousId();
                }
                lastSeen[0] = item.event().id();
                if (filter.test(item.event())) {
                    sink.next(new LiveEvent(item.event(), linkTo[0]));
                    linkTo[0] = item.event().id();
                }
            });
        });
    }

    private static boolean databaseFailure(Throwable failure) {
        return failure instanceof DataAccessException || failure instanceof R2dbcException;
    }

    private static final long NONE = Long.MIN_VALUE;

    /** The live stream skipped events for this subscriber. */
    private static final class MissedLiveEvents extends RuntimeException {

        MissedLiveEvents() {
            super("missed live events", null, false, false);
        }
    }
}
