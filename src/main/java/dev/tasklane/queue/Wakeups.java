package dev.tasklane.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.tasklane.events.Notification;
import dev.tasklane.events.NotificationListener;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.SerializedSink;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Tells whoever waits on a queue (pipelines, long polls) that tasks became due there or will at
 * a given time: at once on this replica, and by a coalesced NOTIFY on the others. NOTIFY is a
 * hint, never the delivery path: every waiter also polls slowly.
 */
@Component
public final class Wakeups {

    private final SerializedSink<Wakeup> local = new SerializedSink<>();
    private final NotificationListener listener;
    private final Batcher<Wakeup, Void> notifier;

    /**
     * Tasks on a queue are due from {@code dueAt} on.
     *
     * @param queue the queue
     * @param dueAt when they become due; null for now
     */
    public record Wakeup(String queue, @Nullable Instant dueAt) {

        String payload() {
            return dueAt == null ? queue : queue + "@" + dueAt.toEpochMilli();
        }

        static Wakeup parse(String payload) {
            int at = payload.lastIndexOf('@');
            if (at < 0) {
                return new Wakeup(payload, null);
            }
            try {
                return new Wakeup(payload.substring(0, at), Instant.ofEpochMilli(Long.parseLong(payload.substring(at + 1))));
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

    Wakeups(NotificationListener listener) {
        this.listener = listener;
        // One NOTIFY transaction at a time per replica; wake-ups raised meanwhile share the next.
        this.notifier = Batcher.ofWrites("notify", 1000, 1, this::sendDistinct);
    }

    /**
     * Raises a wake-up here at once, and on the other replicas with the next NOTIFY. Callers do
     * not wait for the NOTIFY: it is a hint, and a lost one costs a poll interval at worst.
     */
    public void wake(String queue, @Nullable Instant dueAt) {
        Wakeup wakeup = new Wakeup(queue, dueAt);
        local.emit(wakeup);
        notifier.offer(wakeup);
    }

    /** The wake-ups of one queue, raised on any replica. */
    public Flux<Wakeup> of(String queue) {
        return all().filter(w -> w.queue().equals(queue));
    }

    /** Every wake-up, raised on any replica. */
    public Flux<Wakeup> all() {
        Flux<Wakeup> remote = listener.notifications(NotificationListener.WAKE_CHANNEL)
                .map(Notification::payload).map(Wakeup::parse);
        return Flux.merge(local.asFlux(), remote);
    }

    /** Emits when notifications may have been lost (the LISTEN connection came back). */
    public Flux<Boolean> missedWakeups() {
        return listener.connected();
    }

    private Mono<Void> sendDistinct(List<Wakeup> wakeups) {
        Set<String> payloads = new LinkedHashSet<>();
        wakeups.forEach(w -> payloads.add(w.payload()));
        return listener.send(NotificationListener.WAKE_CHANNEL, List.copyOf(payloads));
    }
}
