package dev.tasklane.support;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Group commit for anything that crosses the wire one item at a time: items submitted while a
 * flush is running wait and go together in the next one. When nothing is running, an item is
 * flushed at once, so batching costs no latency on a quiet system and grows with load by itself.
 *
 * <p>The batcher owns its flushes: it subscribes to each one and completes the submitters'
 * monos when it ends. That is the single place where work is started outside a caller's chain.
 *
 * @param <T> what is submitted
 * @param <R> what each submitter gets back (its own result, in the order of the batch)
 */
public final class Batcher<T, R> {

    private static final Logger log = LoggerFactory.getLogger(Batcher.class);

    private record Pending<T, R>(T item, @Nullable MonoSink<R> sink) {

        void succeed(@Nullable R result) {
            if (sink != null) {
                sink.success(result);
            }
        }

        void fail(Throwable error) {
            if (sink != null) {
                sink.error(error);
            }
        }
    }

    private final String name;
    private final int maxBatch;
    private final int maxInFlight;
    private final Function<List<T>, Mono<List<R>>> flush;
    private final Queue<Pending<T, R>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger flushing = new AtomicInteger();

    /**
     * @param name for logs
     * @param maxBatch most items in one flush
     * @param maxInFlight most flushes at once
     * @param flush writes one batch; emits one result per item, in the batch's order
     */
    public Batcher(String name, int maxBatch, int maxInFlight, Function<List<T>, Mono<List<R>>> flush) {
        this.name = name;
        this.maxBatch = maxBatch;
        this.maxInFlight = maxInFlight;
        this.flush = flush;
    }

    /** A batcher whose flush has no result to hand back: submitters learn only that it is done. */
    public static <T> Batcher<T, Void> ofWrites(String name, int maxBatch, int maxInFlight,
                                                 Function<List<T>, Mono<Void>> write) {
        return new Batcher<>(name, maxBatch, maxInFlight,
                items -> write.apply(items).then(Mono.fromSupplier(() -> Arrays.asList(new Void[items.size()]))));
    }

    /**
     * Completes with the item's result when the flush that carried it has completed (empty for
     * a null result); errors if it failed.
     */
    public Mono<R> submit(T item) {
        return Mono.create(sink -> {
            waiting.add(new Pending<>(item, sink));
            drain();
        });
    }

    /** Adds an item to the next flush without waiting for it (failures are only logged). */
    public void offer(T item) {
        waiting.add(new Pending<>(item, null));
        drain();
    }

    private void drain() {
        while (!waiting.isEmpty()) {
            int running = flushing.get();
            if (running >= maxInFlight) {
                return;
            }
            if (!flushing.compareAndSet(running, running + 1)) {
                continue;
            }
            List<Pending<T, R>> batch = new ArrayList<>();
            for (Pending<T, R> next; batch.size() < maxBatch && (next = waiting.poll()) != null; ) {
                batch.add(next);
            }
            if (batch.isEmpty()) {
                flushing.decrementAndGet();
                continue;
            }
            start(batch);
        }
    }

    private void start(List<Pending<T, R>> batch) {
        Mono.defer(() -> flush.apply(batch.stream().map(Pending::item).toList()))
                .doFinally(signal -> {
                    flushing.decrementAndGet();
                    drain();
                })
                .subscribe(
                        results -> {
                            if (results.size() != batch.size()) {
                                fail(batch, new IllegalStateException(name + ": " + results.size()
                                        + " results for a batch of " + batch.size()));
                                return;
                            }
                            for (int i = 0; i < batch.size(); i++) {
                                batch.get(i).succeed(results.get(i));
                            }
                        },
                        error -> fail(batch, error));
    }

    private void fail(List<Pending<T, R>> batch, Throwable error) {
        log.warn("{}: a batch of {} failed: {}", name, batch.size(), error.toString());
        batch.forEach(pending -> pending.fail(error));
    }
}
