package dev.tasklane.schedule;

import java.time.Duration;

import dev.tasklane.queue.NewTask;
import org.jspecify.annotations.Nullable;

/**
 * The task a schedule makes at each fire time, already validated by the caller.
 *
 * @param type task type
 * @param payload JSON text, or null for none
 * @param priority -100..100
 * @param maxAttempts 1..100
 * @param timeoutSeconds how long one attempt may run
 * @param concurrencyKey the group for its queue's flow control, or null
 */
public record TaskTemplate(String type, @Nullable String payload, int priority, int maxAttempts, int timeoutSeconds,
                           @Nullable String concurrencyKey) {

    /** The task for one fire time (or a trigger), due at once. */
    public NewTask toTask(String schedule, java.time.Instant scheduledFor) {
        return new NewTask(type, payload, priority, null, Duration.ZERO, maxAttempts, null, timeoutSeconds,
                concurrencyKey, NewTask.DEFAULT_MAX_SNOOZES).madeBy(new NewTask.Origin(schedule, scheduledFor));
    }
}
