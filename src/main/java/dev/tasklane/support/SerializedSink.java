package dev.tasklane.support;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A hot multicast stream that any thread may emit into at any time. Reactor's sinks refuse a
 * second emitter while one is emitting; retrying in a busy loop burns a core and adds up to its
 * timeout to every contended call. Here the thread that finds the sink busy leaves its value in
 * a queue and returns at once; the emitting thread delivers it before it leaves. Values are
 * delivered one at a time, in the order they were queued; subscribers without demand miss them
 * (as with {@code directBestEffort}).
 */
public final class SerializedSink<T> {

    private final Sinks.Many<T> sink = Sinks.many().multicast().directBestEffort();
    private final Queue<T> pending = new ConcurrentLinkedQueue<>();
    private final AtomicInteger work = new AtomicInteger();

    /** Delivers {@code value} to the current subscribers, now or as soon as the sink is free. */
    public void emit(T value) {
        pending.offer(value);
        if (work.getAndIncrement() != 0) {
            return; // the thread emitting now delivers it
        }
        int missed = 1;
        do {
            for (T next; (next = pending.poll()) != null; ) {
                sink.tryEmitNext(next);
            }
            missed = work.addAndGet(-missed);
        } while (missed != 0);
    }

    public Flux<T> asFlux() {
        return sink.asFlux();
    }
}
