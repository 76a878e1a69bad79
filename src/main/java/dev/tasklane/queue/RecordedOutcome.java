package dev.tasklane.queue;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A task as a batch of outcomes left it, in the columns that follow-up needs: its state (terminal,
 * or queued again for a retry or a snooze, then due at {@code runAt}) and its run's start and end.
 * Not the whole row: returning and decoding every column of every task cost the pipeline's
 * outcome statement about a sixth of its throughput.
 */
public record RecordedOutcome(long id, String queue, String type, TaskState state, Instant runAt,
                              @Nullable Instant startedAt, @Nullable Instant finishedAt, boolean snoozed)
        implements StateChange {
}
