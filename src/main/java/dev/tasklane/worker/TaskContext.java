package dev.tasklane.worker;

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
}
