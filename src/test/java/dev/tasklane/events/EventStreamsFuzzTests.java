package dev.tasklane.events;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The streams' operators against a log that behaves as the real one does, concurrently: a reader
 * thread that moves the horizon and emits (and now and then fails to emit an event to anyone), a
 * table read on other threads, and subscribers that stop reading at random and overflow their
 * buffers again and again. Each must get every event after its start once, in order.
 */
final class EventStreamsFuzzTests {

    private static final int EVENTS = 10_000;
    /** Frames this big fill a live buffer with a few dozen events. */
    private static final String DETAIL = "{\"pad\":\"" + "x".repeat(4000) + "\"}";

    @Test
    void subscribersThatStallAtRandomGetEveryEventOnceInOrder() throws Exception {
        FakeLog log = new FakeLog();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        EventStreams streams = new EventStreams(log, meters, 100);
        List<Reader> readers = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                Reader reader = new Reader(i % 2 == 0 ? null : 0L); // half from now on, half from the start
                readers.add(reader);
                streams.all(reader.after, EventFilter.ALL).subscribe(reader);
            }
            readers.forEach(Reader::awaitOpened);
            log.emitAll();
            for (Reader reader : readers) {
                assertThat(reader.done.await(20, TimeUnit.SECONDS)).as("reader got the last event").isTrue();
                assertThat(reader.failure).isNull();
                long first = reader.ids.get(0);
                if (reader.after != null) {
                    assertThat(first).as("a reader from the start").isEqualTo(1);
                }
                assertThat(reader.ids).as("reader starting at %d", first)
                        .isEqualTo(LongStream.rangeClosed(first, EVENTS).boxed().toList());
            }
        } finally {
            readers.forEach(Reader::dispose);
            log.stop();
        }
        assertThat(meters.get("tasklane.sse.catchups").counter().count()).as("catch-ups from the table").isGreaterThan(10);
    }

    private static TaskEvent event(long id) {
        return new TaskEvent(id, id, "q", "t", null, null, null, "queued", "queued", 0,
                Instant.parse("2026-12-03T10:00:00Z"), DETAIL);
    }

    /** A subscriber that takes a few frames, then stops reading for a moment, at random. */
    private static final class Reader extends BaseSubscriber<byte[]> {

        final Long after;
        final List<Long> ids = new ArrayList<>();
        final CountDownLatch opened = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        volatile Throwable failure;
        private final Scheduler pauses = Schedulers.single();

        Reader(Long after) {
            this.after = after;
        }

        void awaitOpened() {
            try {
                assertThat(opened.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            request(1);
        }

        @Override
        protected void hookOnNext(byte[] frame) {
            String text = new String(frame, 0, Math.min(frame.length, 40), StandardCharsets.UTF_8);
            if (text.startsWith(": connected")) {
                opened.countDown();
            } else if (text.startsWith("id: ")) {
                long id = Long.parseLong(text.substring(4, text.indexOf('\n')));
                ids.add(id);
                if (id == EVENTS) {
                    done.countDown();
                }
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            if (random.nextInt(200) == 0) {
                pauses.schedule(() -> request(1), random.nextInt(1, 30), TimeUnit.MILLISECONDS);
            } else {
                request(1);
            }
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            failure = throwable;
            done.countDown();
        }
    }

    /**
     * The log: events 1..{@link #EVENTS}, emitted by one thread in rounds as {@link EventLog}
     * does (the horizon covers an event before it is emitted), and read back from the "table"
     * on other threads after a short delay.
     */
    private static final class FakeLog extends EventStreamsTests.QuietSource {

        private final Sinks.Many<LiveEvent> hot = Sinks.many().multicast().directBestEffort();
        private final AtomicLong delivered = new AtomicLong();
        private final Scheduler reader = Schedulers.newSingle("fake-reader");
        private final Scheduler table = Schedulers.newParallel("fake-table", 2);

        FakeLog() {
            super(Flux.never());
        }

        void emitAll() {
            reader.schedule(this::round);
        }

        private void round() {
            long from = delivered.get();
            if (from >= EVENTS) {
                return;
            }
            int count = ThreadLocalRandom.current().nextInt(1, 300);
            for (long id = from + 1; id <= Math.min(EVENTS, from + count); id++) {
                delivered.set(id);
                if (ThreadLocalRandom.current().nextInt(1000) == 0) {
                    continue; // an emission that reached nobody: the next event's link shows the break
                }
                TaskEvent event = event(id);
                hot.emitNext(new LiveEvent(event, SseFrames.of(event), id - 1),
                        Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(50)));
            }
            reader.schedule(this::round, ThreadLocalRandom.current().nextInt(0, 3), TimeUnit.MILLISECONDS);
        }

        void stop() {
            reader.dispose();
            table.dispose();
        }

        @Override
        public Flux<LiveEvent> live() {
            return hot.asFlux();
        }

        @Override
        public Mono<Long> horizon() {
            return Mono.fromSupplier(delivered::get);
        }

        @Override
        public Mono<Long> prunedThrough() {
            return Mono.just(0L).delayElement(Duration.ofMillis(1), table);
        }

        @Override
        public Flux<TaskEvent> range(long after, long upTo, EventFilter filter) {
            // pages of 500, each a little later, on the table's threads
            return Flux.defer(() -> {
                long end = Math.min(upTo, after + 500);
                Flux<TaskEvent> page = Flux.range(0, (int) Math.max(0, end - after)).map(i -> event(after + 1 + i))
                        .delaySubscription(Duration.ofNanos(ThreadLocalRandom.current().nextLong(2_000_000)), table);
                return end < upTo ? page.concatWith(range(end, upTo, filter)) : page;
            });
        }
    }
}
