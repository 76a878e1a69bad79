package dev.tasklane.queue;

/**
 * The outcome of enqueueing one task.
 *
 * @param task the task as stored
 * @param created false when an existing task with the same idempotency key was returned
 */
public record Enqueued(Task task, boolean created) {
}
