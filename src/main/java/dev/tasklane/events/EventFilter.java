package dev.tasklane.events;

import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Which events a stream of all events wants: one queue's or every queue's, some names or all.
 * Replays apply it in SQL; the live stream in the replica.
 *
 * @param queue the queue, or null for every queue
 * @param names the event names; empty for all
 */
public record EventFilter(@Nullable String queue, Set<String> names) {

    public static final EventFilter ALL = new EventFilter(null, Set.of());

    public EventFilter {
        names = Set.copyOf(names);
    }

    boolean test(TaskEvent event) {
        return (queue == null || queue.equals(event.queue())) && (names.isEmpty() || names.contains(event.name()));
    }
}
