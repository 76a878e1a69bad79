package dev.tasklane.events;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import dev.tasklane.config.TasklaneProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.r2dbc.spi.R2dbcException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.DataAccessException;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;
import reactor.core.publisher.Sinks;
import reactor.util.retry.Retry;

/**
 * The event streams subscribers read, as SSE frames: a replay from the table after their cursor,
 * then the replica's live stream, with nothing lost or repeated in between.
 *
 * <p>A stream runs as a loop of segments (replay, then live), one after the other with the same
 * operators: a subscriber that falls behind, or a replay that loses the database, ends its segment
 * and the next one starts from the last event it sent, so a stream costs the same after a
 * thousand catch-ups as after none.
 *
 * <p>A subscriber that does not keep up holds at most {@link #LIVE_BUFFER_BYTES} of live frames,
 * whatever the results in them weigh; past that it drops the live feed and, when it reads again,
 * catches up from the table (which costs reads, not memory).
 */
@Component
public final class EventStreams {

    /** Bytes of live frames one subscriber may hold before it is switched to catching up from the table. */
    public static final int LIVE_BUFFER_BYTES = 128 * 1024;

    private static final Logger log = LoggerFactory.getLogger(EventStreams.class);
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);
    private static final long NONE = Long.MIN_VALUE;

    /**
     * How long the first frame waits for a stream's starting point when it must be read (a stream
     * from now on, before the reader has a horizon): a database that does not answer a sequence's
     * value within this does not hold the headers back any longer.
     */
    private static final Duration FIRST_FRAME_WAIT = Duration.ofMillis(500);

    private final EventSource eventLog;
    private final int maxSubscribers;
    private final AtomicInteger taskSubscribers = new AtomicInteger();
    private final AtomicInteger queueSubscribers = new AtomicInteger();
    private final Counter sent;
    private final Counter catchups;
    private final Counter liveDropped;

    @Autowired
    EventStreams(EventLog eventLog, MeterRegistry meters, TasklaneProperties properties) {
        this(eventLog, meters, properties.sse().maxSubscribers());
    }

    EventStreams(EventSource eventLog, MeterRegistry meters, int maxSubscribers) {
        this.eventLog = eventLog;
        this.maxSubscribers = maxSubscribers;
        Gauge.builder("tasklane.sse.subscribers", taskSubscribers, AtomicInteger::get).tag("stream", "task")
                .description("Open task event streams").register(meters);
        Gauge.builder("tasklane.sse.subscribers", queueSubscribers, AtomicInteger::get).tag("stream", "queue")
                .description("Open event streams of all tasks or one queue").register(meters);
        this.sent = Counter.builder("tasklane.sse.events.sent").description("Events sent to subscribers")
                .register(meters);
        Gauge.builder("tasklane.events.live.subscribers", eventLog, EventSource::subscribers)
                .description("Subscriptions to this replica's live event stream").register(meters);
        Gauge.builder("tasklane.events.horizon.lag", eventLog, EventSource::horizonLag)
                .description("Events appended but not yet delivered on this replica's live stream").register(meters);
        this.catchups = Counter.builder("tasklane.sse.catchups")
                .description("Subscribers that fell behind and were caught up from the table").register(meters);
        this.liveDropped = Counter.builder("tasklane.sse.live.dropped")
                .description("Live events not kept for subscribers whose buffer was full; they read them from the table")
                .register(meters);
    }

    /** How many streams this replica serves at most ({@code TASKLANE_SSE_MAX_SUBSCRIBERS}). */
    public int maxSubscribers() {
        return maxSubscribers;
    }

    /** Whether this replica already serves as many streams as it may. */
    public boolean full() {
        return taskSubscribers.get() + queueSubscribers.get() >= maxSubscribers;
    }

    /**
     * One task's events after {@code after}: its history, then live ones. Ends after a terminal
     * event that is the task's latest, since nothing follows it unless the task is retried.
     * Retention keeps every batch that holds an event of a task still waiting or running, or
     * finished within the retention (or held locked by a retry), so this stream has no gap.
     *
     * @param lastEventId the id of the task's latest event when the stream was opened
     */
    public Flux<byte[]> task(long taskId, long after, long lastEventId) {
        return stream(after, false, event -> event.taskId() == taskId, (cursor, horizon) -> eventLog.ofTask(taskId, cursor))
                .takeUntil(item -> item.event() != null && item.event().terminal() && item.event().id() >= lastEventId)
                .doOnSubscribe(s -> taskSubscribers.incrementAndGet())
                .doFinally(s -> taskSubscribers.decrementAndGet())
                .map(this::sent);
    }

    /**
     * Every event {@code filter} wants: after {@code after}, or from now on when it is null. A
     * gap frame comes first where retention pruned events after the cursor.
     */
    public Flux<byte[]> all(@Nullable Long after, EventFilter filter) {
        return stream(after == null ? -1 : after, true, filter::test,
                        (cursor, horizon) -> eventLog.range(cursor, horizon, filter))
                .doOnSubscribe(s -> queueSubscribers.incrementAndGet())
                .doFinally(s -> queueSubscribers.decrementAndGet())
                .map(this::sent);
    }

    private byte[] sent(LiveEvent item) {
        if (item.event() != null) {
            sent.increment();
        }
        return item.frame();
    }

    /**
     * Segments (see {@link #segment}), one after another: a subscriber that missed live events
     * starts the next one at once, a replay that lost the database after a pause.
     *
     * @param after the cursor; below zero means "from now on"
     * @param gapsPossible whether retention may have pruned events this stream would send
     * @param replay events after a cursor, up to the reader's horizon at that moment
     */
    private Flux<LiveEvent> stream(long after, boolean gapsPossible, Predicate<TaskEvent> wanted,
                                   BiFunction<Long, Long, Flux<TaskEvent>> replay) {
        return Flux.defer(() -> {
            Cursor cursor = new Cursor(after);
            return Flux.defer(() -> segment(cursor, gapsPossible, wanted, replay))
                    .retryWhen(Retry.from(failures -> failures.concatMap(signal -> {
                        Throwable failure = signal.failure();
                        if (failure instanceof MissedLiveEvents) {
                            catchups.increment();
                            return Mono.just(signal.totalRetries());
                        }
                        if (databaseFailure(failure)) {
                            log.warn("Event stream lost the database, trying again: {}", failure.toString());
                            return Mono.delay(RETRY_PAUSE);
                        }
                        return Mono.error(failure);
                    })));
        });
    }

    /** Where one stream stands; touched only by its own segments, which run one after another. */
    private static final class Cursor {

        private volatile long lastSent;
        private volatile boolean opened;

        Cursor(long after) {
            this.lastSent = after;
        }
    }

    /**
     * Replays from the table after the cursor, then follows the live stream. The live stream is
     * subscribed (and buffers) before the replay reads the horizon, so an event delivered while
     * the replay runs is not missed; ids at or below what was already sent are dropped, so none is
     * sent twice. The stream's first frame goes out once the live stream is subscribed, before
     * anything waits on the database: from then on every event is included. A break in the live stream's chain of ids, or the mark a full
     * buffer leaves, ends the segment with {@link MissedLiveEvents}.
     */
    private Flux<LiveEvent> segment(Cursor cursor, boolean gapsPossible, Predicate<TaskEvent> wanted,
                                    BiFunction<Long, Long, Flux<TaskEvent>> replay) {
        long after = cursor.lastSent;
        AtomicLong lastLive = new AtomicLong(NONE);
        AtomicLong horizonUsed = new AtomicLong(NONE);
        Sinks.One<Boolean> liveSubscribed = Sinks.one();
        LiveBuffer buffer = new LiveBuffer(LIVE_BUFFER_BYTES);
        Flux<LiveEvent> live = registered(matching(eventLog.live(), wanted)
                .handle(buffer::admit)
                .onBackpressureBuffer(), // bounded in bytes by the buffer's admission
                () -> liveSubscribed.tryEmitValue(true));
        Mono<Long> start = startingPoint(cursor).cache();
        // The first frame follows the starting point, so that whatever a client does once it has
        // the headers comes after it, unless reading it takes longer than the client should wait.
        Flux<LiveEvent> opened = cursor.opened ? Flux.empty() : start.timeout(FIRST_FRAME_WAIT)
                .onErrorResume(e -> Mono.empty())
                .thenMany(Flux.defer(() -> {
                    cursor.opened = true;
                    return Flux.just(LiveEvent.control(SseFrames.OPENED));
                }));
        Flux<LiveEvent> replayed = start.flatMapMany(from -> eventLog.horizon().flatMapMany(horizon -> {
            horizonUsed.set(horizon);
            cursor.lastSent = from;
            Flux<LiveEvent> gap = gapsPossible && after >= 0
                    ? eventLog.prunedThrough().filter(pruned -> pruned > after)
                            .map(pruned -> LiveEvent.control(SseFrames.gap(pruned))).flux()
                    : Flux.empty();
            return gap.concatWith(replay.apply(from, horizon).map(LiveEvent::replayed));
        }));
        // The first frame waits for nothing but the live subscription: a replica whose reader has
        // not yet proven a horizon (a fresh one behind a long transaction) still opens its streams.
        Flux<LiveEvent> history = opened.concatWith(replayed).delaySubscription(liveSubscribed.asMono());
        return Flux.mergeSequential(1, history, live)
                .doOnNext(buffer::release)
                .handle((item, sink) -> pass(item, sink, cursor, lastLive, horizonUsed));
    }

    /**
     * Where the segment's replay begins: after the cursor, or for a stream "from now on" where the
     * reader stands (its horizon, or before it has one the last event id it has read), or, in the
     * first moments of a replica, the last event id handed out when the stream opened: an event a
     * client causes once it has the headers has a larger id, and the replay up to the horizon
     * sends it. (An event whose id was handed out before that but which commits later is taken as
     * before the stream, which is where its transaction began.)
     */
    private Mono<Long> startingPoint(Cursor cursor) {
        return Mono.defer(() -> {
            if (cursor.lastSent >= 0) {
                return Mono.just(cursor.lastSent);
            }
            long known = eventLog.knownStart();
            return known >= 0 ? Mono.just(known) : eventLog.lastAssigned();
        });
    }

    /**
     * Subscribes as {@code live} does and then runs {@code then}: only once the subscribe call has
     * returned is the subscriber certain to receive what the live stream emits next. A sink
     * hands its subscriber {@code onSubscribe} before it adds it to those it emits to, so a horizon
     * read from {@code onSubscribe} could be passed by an event emitted in between, which the
     * subscriber then neither replayed nor received, and did not miss until some later event showed
     * it the break (a quiet queue's last event waited for the next one, found by the CI).
     */
    private static Flux<LiveEvent> registered(Flux<LiveEvent> live, Runnable then) {
        return Flux.from(subscriber -> {
            live.subscribe(subscriber);
            then.run();
        });
    }

    private static void pass(LiveEvent item, SynchronousSink<LiveEvent> sink, Cursor cursor, AtomicLong lastLive,
                             AtomicLong horizonUsed) {
        if (item.previousId() == LiveEvent.CONTROL) {
            sink.next(item);
            return;
        }
        if (item.previousId() == LiveEvent.OVERFLOWED) {
            sink.error(MissedLiveEvents.INSTANCE);
            return;
        }
        TaskEvent event = item.event();
        if (item.previousId() != LiveEvent.REPLAYED) {
            long expected = lastLive.get();
            boolean broken = expected == NONE
                    ? item.previousId() > Math.max(horizonUsed.get(), cursor.lastSent)
                    : item.previousId() != expected;
            if (broken) {
                sink.error(MissedLiveEvents.INSTANCE);
                return;
            }
            lastLive.set(event.id());
        }
        if (event.id() > cursor.lastSent) {
            cursor.lastSent = event.id();
            sink.next(item);
        }
    }

    /**
     * The live events this subscriber wants, each linked to the one it got before (the first to
     * the live stream's position when it subscribed), so that its buffer holds only what it will
     * send and a break in the chain still shows. The live stream gives every event, in order, to
     * a subscriber with demand, and the buffer behind this always has demand: a break here means
     * the live stream itself skipped, and is passed on as a missed-events mark.
     */
    private static Flux<LiveEvent> matching(Flux<LiveEvent> live, Predicate<TaskEvent> wanted) {
        return Flux.defer(() -> {
            long[] lastSeen = {NONE}; // confined to the live stream's one emitting reader
            long[] linkTo = {NONE};
            return live.handle((item, sink) -> {
                TaskEvent event = item.event();
                if (event == null) {
                    return;
                }
                if (lastSeen[0] != NONE && item.previousId() != lastSeen[0]) {
                    sink.next(new LiveEvent(event, item.frame(), LiveEvent.OVERFLOWED));
                    return;
                }
                if (linkTo[0] == NONE) {
                    linkTo[0] = item.previousId();
                }
                lastSeen[0] = event.id();
                if (wanted.test(event)) {
                    sink.next(new LiveEvent(event, item.frame(), linkTo[0]));
                    linkTo[0] = event.id();
                }
            });
        });
    }

    /**
     * Admits live frames into one subscriber's buffer while they fit in its bytes; the first that
     * does not (unless the buffer is empty: one frame always fits) becomes the mark that sends the
     * subscriber back to the table once it reads that far, and everything after it is dropped.
     */
    private final class LiveBuffer {

        private final long limit;
        private final AtomicLong held = new AtomicLong();
        private volatile boolean overflowed;

        LiveBuffer(long limit) {
            this.limit = limit;
        }

        void admit(LiveEvent item, SynchronousSink<LiveEvent> sink) {
            if (overflowed) {
                liveDropped.increment();
                return;
            }
            if (item.previousId() == LiveEvent.OVERFLOWED) {
                overflowed = true;
                sink.next(item);
                return;
            }
            long before = held.get();
            if (before > 0 && before + item.weight() > limit) {
                overflowed = true;
                liveDropped.increment();
                sink.next(new LiveEvent(item.event(), item.frame(), LiveEvent.OVERFLOWED));
                return;
            }
            held.addAndGet(item.weight());
            sink.next(item);
        }

        void release(LiveEvent item) {
            if (item.previousId() >= 0) { // admitted live events; replays and marks never were
                held.addAndGet(-item.weight());
            }
        }
    }

    private static boolean databaseFailure(Throwable failure) {
        return failure instanceof DataAccessException || failure instanceof R2dbcException;
    }

    /** The live stream skipped events for this subscriber. */
    private static final class MissedLiveEvents extends RuntimeException {

        static final MissedLiveEvents INSTANCE = new MissedLiveEvents();

        private MissedLiveEvents() {
            super("missed live events", null, false, false);
        }
    }
}
