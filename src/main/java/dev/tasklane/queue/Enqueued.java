package dev.tasklane.queue;

/**
 * The outcome of enqueueing one task.
 *
 * @param task the task as stored
 * @param how whether it was made, or which existing task was answered instead and why
 */
public record Enqueued(Task task, How how) {

    /** What an enqueue did. */
    public enum How {
        /** A new task. */
        CREATED,
        /** An existing task with the same idempotency key. */
        REPLAYED,
        /** An existing task with the same unique key, within the unique scope. */
        DEDUPLICATED,
        /** A waiting task with the same debounce key, its payload replaced and its run moved. */
        DEBOUNCED
    }

    public boolean created() {
        return how == How.CREATED;
    }
}
