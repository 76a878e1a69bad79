package dev.tasklane.client;

/**
 * Runs one claimed task on a thread that may block (Reactor's bounded elastic pool, never an
 * event loop): the return value (or null) becomes the task's result; an exception fails the
 * attempt (retried while attempts remain, unless it is a {@link PermanentFailure}).
 */
@FunctionalInterface
public interface BlockingTaskHandler {

    Object handle(ClaimedTask task) throws Exception;
}
