package dev.tasklane.events;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the streams read: the replica's live stream and the log's table. {@link EventLog} is the
 * one implementation; tests of the streams' operators put a controllable source in its place.
 */
interface EventSource {

    /**
     * Every event from now on, in id order, each linked to the one before it on the live stream:
     * every event emitted once the subscribe call has returned (not yet during {@code onSubscribe}).
     */
    Flux<LiveEvent> live();

    /** The id up to which every event has been delivered on {@link #live()}, once known: never below one emitted. */
    Mono<Long> horizon();

    /**
     * Without waiting, an id no later than any event a stream opened now must send: the horizon
     * once the reader has established one, before that the last id it has read from the sequence
     * (handed out before now, so a stream starting after it misses nothing that comes later);
     * -1 while it has read none.
     */
    long knownStart();

    /**
     * The last event id handed out so far, its event committed or not: where "from now on" begins
     * for a stream opened before the reader has established a horizon.
     */
    Mono<Long> lastAssigned();

    /** The highest event id retention has deleted; 0 when it has deleted none. */
    Mono<Long> prunedThrough();

    /** Events in (after, upTo] that {@code filter} wants, in id order. */
    Flux<TaskEvent> range(long after, long upTo, EventFilter filter);

    /** One task's events after {@code after}, in id order. */
    Flux<TaskEvent> ofTask(long taskId, long after);

    /** How many subscribers the live stream has now. */
    int subscribers();

    /** Events appended but not yet delivered on the live stream. */
    long horizonLag();
}
