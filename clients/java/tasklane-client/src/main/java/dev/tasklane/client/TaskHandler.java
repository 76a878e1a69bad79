package dev.tasklane.client;

import reactor.core.publisher.Mono;

/**
 * Runs one claimed task without blocking: the Mono's value (or none) becomes the task's result;
 * an error fails the attempt (retried while attempts remain, unless it is a
 * {@link PermanentFailure}). Runs on the client's event loop: never block in it; use
 * {@link BlockingTaskHandler} for blocking work.
 */
@FunctionalInterface
public interface TaskHandler {

    Mono<?> handle(ClaimedTask task);
}
