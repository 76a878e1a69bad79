package dev.tasklane.queue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.tasklane.notify.Channel;
import dev.tasklane.notify.Notifier;
import dev.tasklane.support.SerializedSink;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;

/**
 * Tells whoever waits on a queue (pipelines, long polls) that tasks became due there or will at
 * a given time: at once on this replica, and by a coalesced NOTIFY on the others. NOTIFY is a
 * hint, never the delivery path: every waiter also polls slowly.
 */
@Component
public final class Wakeups {

    private final SerializedSink<Wakeup> local = new SerializedSink<>();
    private final Notifier notifier;

    /**
     * Tasks on a queue are due from {@code dueAt} on.
     *
     * @param queue the queue
     * @param dueAt when they become due; null for now
     */
    public record Wakeup(String queue, @Nullable Instant dueAt) {

        /**
         * {@code queue}, or {@code queue@epochMicros}: the due time as precise as the database
         * keeps it. Cut to milliseconds it came early, and a claim sent at that time found the
         * task not yet due.
         */
        String payload() {
            return dueAt == null ? queue
                    : queue + "@" + (dueAt.getEpochSecond() * 1_000_000 + dueAt.getNano() / 1000);
        }

        static Wakeup parse(String payload) {
            int at = payload.lastIndexOf('@');
            if (at < 0) {
                return new Wakeup(payload, null);
            }
            try {
                long micros = Long.parseLong(payload.substring(at + 1));
                return new Wakeup(payload.substring(0, at), Instant.EPOCH.plus(micros, ChronoUnit.MICROS));
            } catch (NumberFormatException e) {
                return new Wakeup(payload, null);
            }
        }

        /** How long until due, zero if due already. */
        public Duration delay() {
            if (dueAt == null) {
                return Duration.ZERO;
            }
            Duration delay = Duration.between(Instant.now(), dueAt);
            return delay.isNegative() ? Duration.ZERO : delay;
        }
    }

    Wakeups(Notifier notifier) {
        this.notifier = notifier;
    }

    /**
     * Raises a wake-up here at once, and on the other replicas with the next NOTIFY. Callers do
     * not wait for the NOTIFY: it is a hint, and a lost one costs a poll interval at worst.
     */
    public void wake(String queue, @Nullable Instant dueAt) {
        Wakeup wakeup = new Wakeup(queue, dueAt);
        local.emit(wakeup);
        notifier.notify(Channel.WAKE, wakeup.payload());
    }

    /** The wake-ups of one queue, raised on any replica. */
    public Flux<Wakeup> of(String queue) {
        return all().filter(w -> w.queue().equals(queue));
    }

    /** Every wake-up, raised on any replica. */
    public Flux<Wakeup> all() {
        Flux<Wakeup> remote = notifier.notifications(Channel.WAKE).map(Wakeup::parse);
        return Flux.merge(local.asFlux(), remote);
    }

    /** Emits when notifications may have been lost (the LISTEN connection came back). */
    public Flux<Boolean> missedWakeups() {
        return notifier.reconnected();
    }
}
