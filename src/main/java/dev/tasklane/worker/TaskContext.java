package dev.tasklane.worker;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** What a {@link TaskHandler} knows of the attempt it runs, and how it reports progress. */
public interface TaskContext {

    long taskId();

    /** 1 for the first attempt. */
    int attempt();

    int maxAttempts();

    String queue();

    String type();

    /** How long this attempt may run before it is cancelled and fails as {@code timed out after Ns}. */
    int timeoutSeconds();

    /** The payload; a JSON null node when the task has none. */
    JsonNode payload();

    /**
     * Records progress (and its event); completes when stored, or when it is known that it could
     * not be (progress is best effort: a failed report never fails the attempt).
     */
    Mono<Void> progress(@Nullable Integer percent, @Nullable String message);

    /**
     * Ends this attempt asking to run the task again after {@code delay}, without counting the
     * attempt: return what this gives ({@code return task.snooze(Duration.ofMinutes(5));}). The
     * task goes back to queued with a {@code queued} event marked {@code snoozed}. Past the task's
     * {@code maxSnoozes} the attempt fails instead, as retryable, with {@code snoozed too often}.
     */
    default <T> Mono<T> snooze(Duration delay) {
        if (delay.isNegative()) {
            return Mono.error(new IllegalArgumentException("a snooze cannot be negative"));
        }
        return Mono.error(new SnoozeRequested(delay));
    }
}
