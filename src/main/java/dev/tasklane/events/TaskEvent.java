package dev.tasklane.events;

import java.time.Instant;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * One row of the event log.
 *
 * @param id the event id: rises strictly in the order events are delivered
 * @param taskId the task
 * @param queue the task's queue
 * @param taskType the task's type
 * @param concurrencyKey the task's concurrency key, or null when it has none
 * @param schedule the schedule that made the task, or null
 * @param scheduledFor the fire time the task stands for, or null
 * @param name the event name (queued, running, progress, succeeded, failed, cancelled)
 * @param state the task's state after the change
 * @param attempt the task's attempt after the change
 * @param at when the change was made
 * @param detail JSON object text with the name's own fields
 */
public record TaskEvent(long id, long taskId, String queue, String taskType,
                        @Nullable String concurrencyKey, @Nullable String schedule,
                        @Nullable Instant scheduledFor, String name, String state, int attempt,
                        Instant at, String detail) {

    private static final Set<String> TERMINAL = Set.of("succeeded", "failed", "cancelled");

    /** Whether the task was left in a terminal state by this event. */
    public boolean terminal() {
        return TERMINAL.contains(state);
    }
}
