package dev.tasklane.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

class FrameBatchesTests {

    private static final Duration LINGER = Duration.ofMillis(1);

    @Test
    void framesThatArriveTogetherGoOutAsOneBatchOnceTheyHaveLingered() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        TestPublisher<byte[]> frames = TestPublisher.create();
        StepVerifier.create(FrameBatches.of(frames.flux(), 128, 1 << 20, LINGER, time))
                .then(() -> frames.next(frame(1), frame(2), frame(3)))
                .expectNoEvent(Duration.ZERO)
                .then(() -> time.advanceTimeBy(LINGER))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(1, 2, 3))
                .then(() -> frames.next(frame(4)))
                .then(() -> time.advanceTimeBy(LINGER))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(4))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aFullBatchGoesOutAtOnceAndNoBatchHoldsMoreThanTheMost() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        TestPublisher<byte[]> frames = TestPublisher.create();
        StepVerifier.create(FrameBatches.of(frames.flux(), 4, 1 << 20, LINGER, time))
                .then(() -> frames.next(frame(1), frame(2), frame(3), frame(4), frame(5)))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(1, 2, 3, 4))
                .expectNoEvent(Duration.ZERO)
                .then(() -> time.advanceTimeBy(LINGER))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(5))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void nothingGoesOutUnaskedAndWhatLingeredGoesOutAsSoonAsItIsAsked() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        TestPublisher<byte[]> frames = TestPublisher.createNoncompliant(TestPublisher.Violation.REQUEST_OVERFLOW);
        StepVerifier.create(FrameBatches.of(frames.flux(), 4, 1 << 20, LINGER, time), 0)
                .then(() -> frames.next(frame(1), frame(2)))
                .then(() -> time.advanceTimeBy(Duration.ofSeconds(1)))
                .expectNoEvent(Duration.ZERO)
                .thenRequest(1)
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(1, 2))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void atMostTwiceTheLargestBatchIsAskedOfTheFramesWhileNobodyReads() {
        AtomicLong asked = new AtomicLong();
        Flux<byte[]> frames = Flux.range(0, 10_000).map(FrameBatchesTests::frame).doOnRequest(asked::addAndGet);
        StepVerifier.create(FrameBatches.of(frames, 8, 1 << 20, LINGER, Schedulers.parallel()), 0)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(50))
                .then(() -> assertThat(asked).hasValue(16))
                .thenRequest(1)
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7))
                .then(() -> assertThat(asked).hasValue(24))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void noMoreFramesAreAskedForWhileThoseWaitingWeighTheMost() {
        AtomicLong asked = new AtomicLong();
        Flux<byte[]> frames = Flux.range(0, 10_000).map(id -> Arrays.copyOf(frame(id), 100)).doOnRequest(asked::addAndGet);
        StepVerifier.create(FrameBatches.of(frames, 8, 250, LINGER, Schedulers.parallel()), 0)
                .expectSubscription()
                .then(() -> assertThat(asked).hasValue(16))
                .thenRequest(1)
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7))
                .then(() -> assertThat(asked).as("8 frames of 100 bytes still wait").hasValue(16))
                .thenRequest(1)
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(8, 9, 10, 11, 12, 13, 14, 15))
                .then(() -> assertThat(asked).hasValue(32))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void theEndComesAfterEveryFrameAndAFailureAtOnce() {
        StepVerifier.create(FrameBatches.of(Flux.just(frame(1), frame(2)), 128, 1 << 20, Duration.ofHours(1)))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(1, 2))
                .verifyComplete();
        IllegalStateException failure = new IllegalStateException("broken");
        StepVerifier.create(FrameBatches.of(Flux.just(frame(1)).concatWith(Flux.error(failure)), 128, 1 << 20, Duration.ofHours(1)))
                .verifyErrorSatisfies(error -> assertThat(error).isSameAs(failure));
    }

    @Test
    void framesGoOutAtOnceWhenTheTimerSchedulerHasStopped() {
        Scheduler stopped = Schedulers.newSingle("frame-batches-stopped");
        stopped.dispose();
        TestPublisher<byte[]> frames = TestPublisher.create();
        StepVerifier.create(FrameBatches.of(frames.flux(), 128, 1 << 20, Duration.ofHours(1), stopped))
                .then(() -> frames.next(frame(1)))
                .assertNext(batch -> assertThat(ids(batch)).containsExactly(1))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void cancellingStopsTheFramesAndTheTimer() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        TestPublisher<byte[]> frames = TestPublisher.create();
        StepVerifier.create(FrameBatches.of(frames.flux(), 128, 1 << 20, LINGER, time))
                .then(() -> frames.next(frame(1)))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        frames.assertCancelled();
        time.advanceTimeBy(LINGER); // the timer, if it were still armed, would deliver to nobody
    }

    @Test
    void aReaderThatThrowsEndsTheStreamInsteadOfStallingIt() {
        TestPublisher<byte[]> frames = TestPublisher.create();
        List<Throwable> failures = new ArrayList<>();
        FrameBatches.of(frames.flux(), 1, 1 << 20, LINGER).subscribe(new reactor.core.CoreSubscriber<List<byte[]>>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(List<byte[]> batch) {
                throw new IllegalStateException("reader broke");
            }

            @Override
            public void onError(Throwable failure) {
                failures.add(failure);
            }

            @Override
            public void onComplete() {
            }
        });
        frames.next(frame(1));
        frames.assertCancelled();
        assertThat(failures).singleElement().satisfies(failure -> assertThat(failure).hasMessage("reader broke"));
    }

    /**
     * Frames from several threads, a reader that stops for a while now and then, keep-alive
     * ticks beside the frames: every frame must arrive, in order, each time.
     */
    @Test
    void everyFrameArrivesInOrderWhateverTheThreadsAndPausesOfWritersAndReaders() throws Exception {
        // elastic threads: the writers pause with Thread.sleep, which BlockHound refuses on parallel ones
        Scheduler threads = Schedulers.newBoundedElastic(4, 1000, "frame-batches-test");
        try {
            for (int round = 0; round < 40; round++) {
                int total = 5_000;
                Sinks.Many<byte[]> source = Sinks.many().unicast().onBackpressureBuffer();
                Flux<byte[]> ticks = Flux.interval(Duration.ofMillis(3), threads).onBackpressureDrop().map(tick -> new byte[0]);
                Queue<Integer> received = new ConcurrentLinkedQueue<>();
                FrameBatches.of(Flux.merge(source.asFlux(), ticks), 16, 1 << 20, LINGER, threads)
                        .subscribe(new PausingReader(received, threads));
                Object emitting = new Object();
                CountDownLatch written = new CountDownLatch(2);
                AtomicLong next = new AtomicLong();
                for (int writer = 0; writer < 2; writer++) {
                    threads.schedule(() -> {
                        for (int i = 0; i < total / 2; i++) {
                            synchronized (emitting) {
                                source.tryEmitNext(frame((int) next.getAndIncrement()));
                            }
                            if (ThreadLocalRandom.current().nextInt(400) == 0) {
                                sleep(1);
                            }
                        }
                        written.countDown();
                    });
                }
                assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (received.size() < total && System.nanoTime() < deadline) {
                    Thread.sleep(2);
                }
                assertThat(received).as("frames received in round %d", round).hasSize(total);
                List<Integer> inOrder = new ArrayList<>(received);
                for (int i = 0; i < total; i++) {
                    assertThat(inOrder.get(i)).isEqualTo(i);
                }
                synchronized (emitting) {
                    source.tryEmitComplete();
                }
            }
        } finally {
            threads.dispose();
        }
    }

    /**
     * A stalled subscriber's catch-up: a burst of frames arrives while the reader has stopped,
     * the reader comes back asking a batch at a time, and then nothing more arrives: the last
     * frames of each burst must still go out.
     */
    @Test
    void theLastFramesOfABurstGoOutWhenNothingFollowsThem() throws Exception {
        Scheduler threads = Schedulers.newBoundedElastic(4, 1000, "frame-batches-test");
        try {
            Sinks.Many<byte[]> source = Sinks.many().unicast().onBackpressureBuffer();
            Queue<Integer> received = new ConcurrentLinkedQueue<>();
            AtomicBoolean paused = new AtomicBoolean();
            BaseSubscriber<List<byte[]>> reader = new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(Subscription subscription) {
                }

                @Override
                protected void hookOnNext(List<byte[]> batch) {
                    batch.forEach(frame -> received.add(id(frame)));
                    if (!paused.get()) {
                        threads.schedule(() -> request(1));
                    }
                }
            };
            FrameBatches.of(source.asFlux(), 128, 1 << 20, LINGER, threads).subscribe(reader);
            int sent = 0;
            for (int round = 0; round < 300; round++) {
                paused.set(true);
                int burst = 1 + ThreadLocalRandom.current().nextInt(700);
                for (int i = 0; i < burst; i++) {
                    source.tryEmitNext(frame(sent++));
                }
                sleep(ThreadLocalRandom.current().nextInt(3));
                paused.set(false);
                reader.request(1);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (received.size() < sent && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(received).as("frames received after burst %d", round).hasSize(sent);
            }
            assertThat(new ArrayList<>(received)).isSorted();
        } finally {
            threads.dispose();
        }
    }

    /** Reads one batch at a time, and now and then stops reading for a few milliseconds. */
    private static final class PausingReader extends BaseSubscriber<List<byte[]>> {

        private final Queue<Integer> received;
        private final Scheduler threads;

        PausingReader(Queue<Integer> received, Scheduler threads) {
            this.received = received;
            this.threads = threads;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            request(1);
        }

        @Override
        protected void hookOnNext(List<byte[]> batch) {
            for (byte[] frame : batch) {
                if (frame.length > 0) {
                    received.add(id(frame));
                }
            }
            int dice = ThreadLocalRandom.current().nextInt(100);
            if (dice < 3) {
                threads.schedule(() -> request(1), 5 + dice * 5L, TimeUnit.MILLISECONDS);
            } else {
                request(1);
            }
        }
    }

    private static byte[] frame(int id) {
        return new byte[] {(byte) (id >>> 24), (byte) (id >>> 16), (byte) (id >>> 8), (byte) id};
    }

    private static int id(byte[] frame) {
        return (frame[0] & 0xff) << 24 | (frame[1] & 0xff) << 16 | (frame[2] & 0xff) << 8 | frame[3] & 0xff;
    }

    private static List<Integer> ids(List<byte[]> batch) {
        return batch.stream().map(FrameBatchesTests::id).toList();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
