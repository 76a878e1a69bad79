package dev.tasklane.worker;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.support.SerializedSink;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * One timer for the next moment a claimer has reason to look again: the earliest of the times it
 * was told (a delayed task enqueued, a retry backing off, the database's next due time when a
 * claim left the queue drained). Only the earliest is kept, so a flood of delayed tasks costs one
 * scheduled task, not one each; a fire that comes early costs one claim that finds nothing and
 * sets the timer again.
 */
final class DueTimer {

    /** One scheduled fire; a fire counts only while it is still the pending one. */
    private static final class Slot {

        private final long deadlineNanos;
        private volatile @Nullable Disposable task;

        Slot(long deadlineNanos) {
            this.deadlineNanos = deadlineNanos;
        }

        void dispose() {
            Disposable scheduled = task;
            if (scheduled != null) {
                scheduled.dispose();
            }
        }
    }

    private static final Duration LONGEST = Duration.ofDays(1);

    private final Scheduler clock;
    private final SerializedSink<Long> fires = new SerializedSink<>();
    private final AtomicReference<@Nullable Slot> pending = new AtomicReference<>();

    DueTimer(Scheduler clock) {
        this.clock = clock;
    }

    /** Emits each time the timer fires. */
    Flux<Long> fires() {
        return fires.asFlux();
    }

    /**
     * Fires after {@code delay}, unless it already fires sooner; after a day at most, since a
     * task may be due in 9999, beyond what a long counts in nanoseconds (292 years). A fire that
     * comes early only sends a claim that finds nothing and sets the timer again.
     */
    void after(Duration delay) {
        Duration bounded = delay.compareTo(LONGEST) > 0 ? LONGEST : delay;
        long deadline = clock.now(TimeUnit.NANOSECONDS) + bounded.toNanos();
        while (true) {
            Slot current = pending.get();
            if (current != null && current.deadlineNanos - deadline <= 0) {
                return;
            }
            Slot slot = new Slot(deadline);
            if (!pending.compareAndSet(current, slot)) {
                continue;
            }
            if (current != null) {
                current.dispose();
            }
            // Scheduled only once it is the pending slot, so that its fire always counts.
            slot.task = clock.schedule(() -> fire(slot), Math.max(0, bounded.toNanos()), TimeUnit.NANOSECONDS);
            return;
        }
    }

    void cancel() {
        Slot current = pending.getAndSet(null);
        if (current != null) {
            current.dispose();
        }
    }

    private void fire(Slot slot) {
        if (pending.compareAndSet(slot, null)) {
            fires.emit(0L);
        }
    }
}
