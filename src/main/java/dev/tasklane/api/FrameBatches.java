package dev.tasklane.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * A stream's frames gathered into batches, one per socket write: a batch goes out when it holds
 * {@code maxFrames}, when its first frame has waited about {@code linger}, or when the frames end;
 * and only as the writer asks for batches. At most {@code 2 × maxFrames} frames wait here, and
 * no more are asked for while those waiting weigh {@code maxBytes}.
 *
 * <p>Reactor's {@code bufferTimeout(max, time, true)} does the same, but under load it was seen
 * to keep a stream's last frames with a batch requested and no timer left to send them: the
 * subscriber got nothing more, not even keep-alives. Here every change (a frame, a request, the
 * timer, the end) runs one drain loop, one thread at a time, which sends whatever may go.
 */
final class FrameBatches {

    private FrameBatches() {
    }

    static Flux<List<byte[]>> of(Flux<byte[]> frames, int maxFrames, int maxBytes, Duration linger) {
        return of(frames, maxFrames, maxBytes, linger, Schedulers.parallel());
    }

    static Flux<List<byte[]>> of(Flux<byte[]> frames, int maxFrames, int maxBytes, Duration linger, Scheduler timer) {
        return frames.transform(Operators.<byte[], List<byte[]>>lift((scannable, downstream) ->
                new Batching(downstream, maxFrames, maxBytes, linger.toNanos(), timer)));
    }

    /**
     * One stream's batching. Its queue is filled by the upstream and emptied by the draining
     * thread; everything else that changes is read and written in the drain loop alone, or is
     * atomic.
     */
    private static final class Batching implements CoreSubscriber<byte[]>, Subscription {

        private final CoreSubscriber<? super List<byte[]>> downstream;
        private final int maxFrames;
        private final int maxBytes;
        private final long lingerNanos;
        private final Scheduler timer;
        private final Queue<byte[]> queue = new ConcurrentLinkedQueue<>();
        private final AtomicInteger queued = new AtomicInteger();
        private final AtomicLong queuedBytes = new AtomicLong();
        private final AtomicLong asked = new AtomicLong(); // of the upstream, not yet arrived
        private final AtomicLong requested = new AtomicLong();
        private final AtomicInteger work = new AtomicInteger();
        private final AtomicBoolean timerArmed = new AtomicBoolean();
        private volatile @Nullable Subscription upstream;
        private volatile @Nullable Disposable pendingTimer;
        private volatile boolean lingered;
        private volatile boolean done;
        private volatile @Nullable Throwable failure;
        private volatile boolean cancelled;
        private boolean terminated; // drain loop only

        Batching(CoreSubscriber<? super List<byte[]>> downstream, int maxFrames, int maxBytes, long lingerNanos,
                 Scheduler timer) {
            this.downstream = downstream;
            this.maxFrames = maxFrames;
            this.maxBytes = maxBytes;
            this.lingerNanos = lingerNanos;
            this.timer = timer;
        }

        @Override
        public Context currentContext() {
            return downstream.currentContext();
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            if (Operators.validate(upstream, subscription)) {
                upstream = subscription;
                downstream.onSubscribe(this);
                askForMore(subscription);
            }
        }

        @Override
        public void onNext(byte[] frame) {
            // Counted as waiting before it stops counting as asked for, so askForMore never asks beyond the bound.
            queue.offer(frame);
            queuedBytes.addAndGet(frame.length);
            queued.incrementAndGet();
            asked.decrementAndGet();
            drain();
        }

        @Override
        public void onError(Throwable error) {
            failure = error;
            done = true;
            drain();
        }

        @Override
        public void onComplete() {
            done = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                requested.accumulateAndGet(n, Operators::addCap);
                drain();
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            Subscription subscription = upstream;
            if (subscription != null) {
                subscription.cancel();
            }
            Disposable armed = pendingTimer;
            if (armed != null) {
                armed.dispose();
            }
            drain();
        }

        private void drain() {
            if (work.getAndIncrement() != 0) {
                return; // the thread draining now sees this change before it leaves
            }
            int missed = 1;
            do {
                try {
                    drainOnce();
                } catch (Throwable broken) { // a downstream that throws must not leave the loop taken for good
                    Exceptions.throwIfJvmFatal(broken);
                    fail(broken);
                }
                missed = work.addAndGet(-missed);
            } while (missed != 0);
        }

        private void drainOnce() {
            while (!cancelled && !terminated) {
                boolean finished = done;
                Throwable error = failure;
                if (error != null) {
                    terminated = true;
                    downstream.onError(error);
                    break;
                }
                int waiting = queued.get();
                if (waiting == 0) {
                    lingered = false;
                    if (finished) {
                        terminated = true;
                        downstream.onComplete();
                    }
                    return;
                }
                if (!finished && waiting < maxFrames && !lingered && armTimer()) {
                    return;
                }
                if (requested.get() == 0) {
                    return;
                }
                // The count trails the queue (a frame is counted after it is queued), so these are there.
                int size = Math.min(waiting, maxFrames);
                List<byte[]> batch = new ArrayList<>(size);
                long bytes = 0;
                for (int i = 0; i < size; i++) {
                    byte[] frame = queue.poll();
                    batch.add(frame);
                    bytes += frame.length;
                }
                queued.addAndGet(-size);
                queuedBytes.addAndGet(-bytes);
                requested.decrementAndGet();
                downstream.onNext(batch);
                Subscription subscription = upstream;
                if (subscription != null) {
                    askForMore(subscription);
                }
            }
            queue.clear();
            queued.set(0);
        }

        /** Asks for frames up to twice a batch, unless those waiting already weigh {@code maxBytes}. */
        private void askForMore(Subscription subscription) {
            if (queuedBytes.get() >= maxBytes) {
                return; // asked again when a batch has gone out
            }
            long more = 2L * maxFrames - queued.get() - asked.get();
            if (more > 0) {
                asked.addAndGet(more);
                subscription.request(more);
            }
        }

        private void fail(Throwable broken) {
            Subscription subscription = upstream;
            if (subscription != null) {
                subscription.cancel();
            }
            queue.clear();
            if (!terminated) {
                terminated = true;
                downstream.onError(Operators.onOperatorError(broken, downstream.currentContext()));
            }
        }

        /**
         * Makes sure a timer will end the current linger: true when one will, false when the
         * scheduler refused one (it is stopping) and the frames should go now.
         */
        private boolean armTimer() {
            if (!timerArmed.compareAndSet(false, true)) {
                return true;
            }
            try {
                pendingTimer = timer.schedule(() -> {
                    timerArmed.set(false);
                    lingered = true;
                    drain();
                }, lingerNanos, TimeUnit.NANOSECONDS);
                return true;
            } catch (RejectedExecutionException stopping) {
                timerArmed.set(false);
                lingered = true;
                return false;
            }
        }
    }
}
