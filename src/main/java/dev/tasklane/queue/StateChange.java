package dev.tasklane.queue;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What a write left of a task, as far as the metrics and the wake-ups that follow it read it: a
 * whole {@link Task}, or the few columns a batch of outcomes returns ({@link RecordedOutcome}).
 */
interface StateChange {

    String queue();

    String type();

    TaskState state();

    /** When a queued task comes due. */
    Instant runAt();

    @Nullable Instant startedAt();

    @Nullable Instant finishedAt();
}
