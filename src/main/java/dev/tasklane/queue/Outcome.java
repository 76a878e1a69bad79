package dev.tasklane.queue;

import java.time.Duration;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * How one attempt ended, as its worker reports it. It changes the task only while that worker
 * still holds an unexpired lease on it: the lease {@code leaseId}, or any of the worker's leases
 * when that is null (a pull worker that does not send it).
 *
 * @param taskId the task
 * @param leaseId the lease of the attempt that ended, or null for any lease of {@code workerId}
 * @param workerId the worker that held the lease
 * @param succeeded true for success
 * @param result JSON text of the result, on success, already known to be storable
 * @param error what went wrong, on failure, already known to be storable
 * @param retryable false for a permanent failure: the task fails whatever attempts are left
 * @param retryDelay how long to wait before the next attempt, when there is one
 * @param snooze for a snooze, how long to wait; the attempt is then not counted, unless the task
 *               has snoozed {@code maxSnoozes} times already, when the outcome is the failure
 *               the other fields describe
 */
public record Outcome(long taskId, @Nullable UUID leaseId, String workerId, boolean succeeded,
                      @Nullable String result, @Nullable String error, boolean retryable, Duration retryDelay,
                      @Nullable Duration snooze) {

    /** The error of a snooze past the task's maxSnoozes. */
    public static final String SNOOZED_TOO_OFTEN = "snoozed too often";

    public static Outcome success(Task task, String workerId, @Nullable String result) {
        return new Outcome(task.id(), task.leaseId(), workerId, true, result, null, false, Duration.ZERO, null);
    }

    public static Outcome failure(Task task, String workerId, String error, boolean retryable, Duration retryDelay) {
        return new Outcome(task.id(), task.leaseId(), workerId, false, null, error, retryable, retryDelay, null);
    }

    /**
     * The attempt asks to run again after {@code delay}, not counted; past the task's maxSnoozes,
     * a retryable failure after {@code retryDelay} instead.
     */
    public static Outcome snooze(long taskId, @Nullable UUID leaseId, String workerId, Duration delay,
                                 Duration retryDelay) {
        return new Outcome(taskId, leaseId, workerId, false, null, SNOOZED_TOO_OFTEN, true, retryDelay, delay);
    }

    /** The same attempt ended as a permanent failure instead, for an outcome that cannot be stored. */
    public Outcome asUnstorable(String why) {
        return new Outcome(taskId, leaseId, workerId, false, null, why, false, Duration.ZERO, null);
    }
}
