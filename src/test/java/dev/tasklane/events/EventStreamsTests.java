package dev.tasklane.events;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/** The streams' operators against a source the test controls, no database. */
final class EventStreamsTests {

    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Test
    void aStreamForcedThroughAThousandCatchUpsKeepsAFlatStack() {
        int afterTen = depthOfDeliveryAfter(10);
        int afterAThousand = depthOfDeliveryAfter(1000);
        // Nested catch-ups would each add a layer of operators below the delivery: thousands of frames.
        assertThat(afterAThousand).isEqualTo(afterTen);
    }

    /** The stack depth at which event 7 reaches the subscriber after {@code catchUps} catch-ups. */
    private static int depthOfDeliveryAfter(int catchUps) {
        BreakingSource source = new BreakingSource(catchUps);
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);
        List<Integer> depths = new ArrayList<>();
        StepVerifier.create(streams.all(0L, EventFilter.ALL)
                        .doOnNext(frame -> depths.add(Thread.currentThread().getStackTrace().length))
                        .map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .expectNextMatches(frame -> frame.startsWith("id: 7\n"))
                .thenCancel()
                .verify(PATIENCE);
        assertThat(source.subscriptions.get()).isEqualTo(catchUps + 1);
        assertThat(source.open.get()).as("live subscriptions left open").isZero();
        return depths.get(1);
    }

    @Test
    void theFirstFrameGoesOutOnceTheLiveStreamIsSubscribedAndTheEventsFollowIt() {
        Sinks.Many<LiveEvent> live = Sinks.many().multicast().directBestEffort();
        QuietSource source = new QuietSource(live.asFlux());
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);

        StepVerifier.create(streams.all(null, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.equals(": connected\nretry: 1000\n\n"))
                .then(() -> live.tryEmitNext(new LiveEvent(event(41), SseFrames.of(event(41)), 40)))
                .expectNextMatches(frame -> frame.startsWith("id: 41\nevent: queued\ndata: {\"eventId\":41,"))
                .thenCancel()
                .verify(PATIENCE);
    }

    @Test
    void everySubscriberWritesTheFrameTheReaderBuiltOnce() {
        Sinks.Many<LiveEvent> live = Sinks.many().multicast().directBestEffort();
        EventStreams streams = new EventStreams(new QuietSource(live.asFlux()), new SimpleMeterRegistry(), 10);
        byte[] frame = SseFrames.of(event(41));
        List<byte[]> first = new ArrayList<>();
        List<byte[]> second = new ArrayList<>();
        var one = streams.all(null, EventFilter.ALL).subscribe(first::add);
        var two = streams.all(null, EventFilter.ALL).subscribe(second::add);
        live.tryEmitNext(new LiveEvent(event(41), frame, 40));
        one.dispose();
        two.dispose();
        assertThat(first.get(1)).isSameAs(frame);
        assertThat(second.get(1)).isSameAs(frame);
    }

    /**
     * The reader emits event 41 while a resuming stream's live subscription is between
     * {@code onSubscribe} and its registration with the sink, as a sink's own subscribe does it:
     * the stream reads the horizon only once registered, so it replays 41 from the table.
     */
    @Test
    void anEventEmittedWhileTheLiveStreamIsBeingSubscribedIsReplayedNotLost() {
        Sinks.Many<LiveEvent> sink = Sinks.many().multicast().directBestEffort();
        AtomicLong horizon = new AtomicLong(40);
        Flux<LiveEvent> joinsLate = Flux.from(subscriber -> sink.asFlux().subscribe(new BaseSubscriber<LiveEvent>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                subscriber.onSubscribe(subscription);
                horizon.set(41); // the reader emits 41 to the sink's subscribers, not yet this one
                sink.tryEmitNext(new LiveEvent(event(41), SseFrames.of(event(41)), 40));
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            protected void hookOnNext(LiveEvent item) {
                subscriber.onNext(item);
            }
        }));
        QuietSource source = new QuietSource(joinsLate) {
            @Override
            public Mono<Long> horizon() {
                return Mono.fromSupplier(horizon::get);
            }

            @Override
            public Flux<TaskEvent> range(long after, long upTo, EventFilter filter) {
                return Flux.range(40, 2).map(id -> event(id)).filter(e -> e.id() > after && e.id() <= upTo);
            }
        };
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);

        StepVerifier.create(streams.all(39L, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .expectNextMatches(frame -> frame.startsWith("id: 40\n"))
                .expectNextMatches(frame -> frame.startsWith("id: 41\n"))
                .thenCancel()
                .verify(PATIENCE);
    }

    @Test
    void aStreamOpensBeforeTheReaderHasAHorizonAndSendsWhatCommittedAfterItOpened() {
        Sinks.Many<LiveEvent> live = Sinks.many().multicast().directBestEffort();
        Sinks.One<Long> firstHorizon = Sinks.one();
        // a fresh replica whose reader cannot prove a horizon yet: 50 ids handed out when the stream opens
        QuietSource source = new UnprovenSource(live.asFlux(), firstHorizon.asMono(), Mono.just(50L)) {
            @Override
            public Flux<TaskEvent> range(long after, long upTo, EventFilter filter) {
                return Flux.just(event(49), event(55)).filter(e -> e.id() > after && e.id() <= upTo);
            }
        };
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);

        StepVerifier.create(streams.all(null, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .expectNoEvent(Duration.ofMillis(200))
                .then(() -> {
                    firstHorizon.tryEmitValue(60L);
                    live.tryEmitNext(new LiveEvent(event(61), SseFrames.of(event(61)), 60));
                })
                .expectNextMatches(frame -> frame.startsWith("id: 55\n"))
                .expectNextMatches(frame -> frame.startsWith("id: 61\n"))
                .thenCancel()
                .verify(PATIENCE);
    }

    @Test
    void aStreamFromNowOnSendsItsFirstFrameOnlyOnceItKnowsWhereItStarts() {
        java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
        // what a client does once it has the first frame must come after the starting point is read
        QuietSource source = new UnprovenSource(Flux.never(), Mono.never(),
                Mono.delay(Duration.ofMillis(200)).map(tick -> 50L).doOnNext(id -> started.set(true)));
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);
        StepVerifier.create(streams.all(null, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected") && started.get())
                .thenCancel()
                .verify(PATIENCE);
    }

    @Test
    void aStreamFromNowOnOpensWithinHalfASecondWhenTheDatabaseDoesNotAnswer() {
        EventStreams streams = new EventStreams(new UnprovenSource(Flux.never(), Mono.never(), Mono.never()),
                new SimpleMeterRegistry(), 10);
        StepVerifier.create(streams.all(null, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .thenCancel()
                .verify(Duration.ofSeconds(1));
    }

    @Test
    void aResumedStreamOpensBeforeTheReaderHasAHorizon() {
        QuietSource source = new QuietSource(Flux.never()) {
            @Override
            public Mono<Long> horizon() {
                return Mono.never();
            }

            @Override
            public Mono<Long> prunedThrough() {
                return Mono.never();
            }
        };
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 10);
        StepVerifier.create(streams.all(7L, EventFilter.ALL).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .thenCancel()
                .verify(Duration.ofSeconds(1));
        StepVerifier.create(streams.task(3, 0, 9).map(frame -> new String(frame, StandardCharsets.UTF_8)))
                .expectNextMatches(frame -> frame.startsWith(": connected"))
                .thenCancel()
                .verify(Duration.ofSeconds(1));
    }

    @Test
    void aFullStreamIsRefused() {
        QuietSource source = new QuietSource(Flux.never());
        EventStreams streams = new EventStreams(source, new SimpleMeterRegistry(), 1);
        assertThat(streams.full()).isFalse();
        StepVerifier.create(streams.all(null, EventFilter.ALL))
                .expectNextCount(1)
                .then(() -> assertThat(streams.full()).isTrue())
                .thenCancel()
                .verify(PATIENCE);
        assertThat(streams.full()).isFalse();
    }

    /** An event of the log, for the tests' sources. */
    static TaskEvent event(long id) {
        return new TaskEvent(id, 1, "q", "t", null, null, null, "queued", "queued", 0, Instant.parse("2026-12-03T10:00:00Z"), "{}");
    }

    /** A log with nothing in its table: live events only, as {@code live} gives them, after {@code horizon}. */
    static class QuietSource implements EventSource {

        private final Flux<LiveEvent> live;
        private final long horizon;

        QuietSource(Flux<LiveEvent> live) {
            this(live, 40);
        }

        QuietSource(Flux<LiveEvent> live, long horizon) {
            this.live = live;
            this.horizon = horizon;
        }

        @Override
        public Flux<LiveEvent> live() {
            return live;
        }

        @Override
        public Mono<Long> horizon() {
            return Mono.just(horizon);
        }

        @Override
        public long knownStart() {
            return horizon;
        }

        @Override
        public Mono<Long> lastAssigned() {
            return Mono.just(horizon);
        }

        @Override
        public Mono<Long> prunedThrough() {
            return Mono.just(0L);
        }

        @Override
        public Flux<TaskEvent> range(long after, long upTo, EventFilter filter) {
            return Flux.empty();
        }

        @Override
        public Flux<TaskEvent> ofTask(long taskId, long after) {
            return Flux.empty();
        }

        @Override
        public int subscribers() {
            return 0;
        }

        @Override
        public long horizonLag() {
            return 0;
        }
    }

    /** A fresh replica's log whose reader has not proven a horizon yet: it comes from {@code horizon}. */
    static class UnprovenSource extends QuietSource {

        private final Mono<Long> horizon;
        private final Mono<Long> lastAssigned;

        UnprovenSource(Flux<LiveEvent> live, Mono<Long> horizon, Mono<Long> lastAssigned) {
            super(live);
            this.horizon = horizon;
            this.lastAssigned = lastAssigned;
        }

        @Override
        public Mono<Long> horizon() {
            return horizon;
        }

        @Override
        public long knownStart() {
            return -1;
        }

        @Override
        public Mono<Long> lastAssigned() {
            return lastAssigned;
        }
    }

    /**
     * A live stream that skips an event, the moment it is subscribed, for the first {@code breaks}
     * subscriptions (each sends the stream back to the table), then delivers event 7 in order.
     */
    private static final class BreakingSource extends QuietSource {

        private final AtomicInteger subscriptions;
        private final AtomicInteger open;

        BreakingSource(int breaks) {
            this(breaks, new AtomicInteger(), new AtomicInteger());
        }

        private BreakingSource(int breaks, AtomicInteger subscriptions, AtomicInteger open) {
            super(Flux.defer(() -> {
                // 6 comes after an event past the horizon (5): a skip; 5 is the horizon itself: in order
                long previous = subscriptions.incrementAndGet() <= breaks ? 6 : 5;
                return Flux.just(new LiveEvent(event(7), SseFrames.of(event(7)), previous)).concatWith(Flux.never());
            }).doOnSubscribe(s -> open.incrementAndGet()).doFinally(s -> open.decrementAndGet()), 5);
            this.subscriptions = subscriptions;
            this.open = open;
        }
    }
}
