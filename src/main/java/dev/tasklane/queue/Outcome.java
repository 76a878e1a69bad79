package dev.tasklane.queue;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * How one attempt ended, as its worker reports it.
 *
 * @param taskId the task
 * @param attempt the attempt that ended; an outcome for an older attempt changes nothing
 * @param workerId the worker that held the lease
 * @param succeeded true for success
 * @param result JSON text of the result, on success
 * @param error what went wrong, on failure
 * @param retryable false for a permanent failure: the task fails whatever attempts are left
 * @param retryDelay how long to wait before the next attempt, when there is one
 * @param leaseMustHold true when an expired lease voids the outcome (pull workers), false when
 *                      holding the attempt is enough (in-process, whose keeper stops lapsed handlers)
 */
public record Outcome(long taskId, int attempt, String workerId, boolean succeeded, @Nullable String result,
                      @Nullable String error, boolean retryable, Duration retryDelay, boolean leaseMustHold) {

    public static Outcome success(Task task, String workerId, @Nullable String result) {
        return new Outcome(task.id(), task.attempt(), workerId, true, result, null, false, Duration.ZERO, false);
    }

    public static Outcome failure(Task task, String workerId, String error, boolean retryable, Duration retryDelay) {
        return new Outcome(task.id(), task.attempt(), workerId, false, null, error, retryable, retryDelay, false);
    }
}
