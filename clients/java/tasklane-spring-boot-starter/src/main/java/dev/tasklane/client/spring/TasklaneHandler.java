package dev.tasklane.client.spring;

import dev.tasklane.client.TaskHandler;

/**
 * A bean that handles one task type without blocking; the starter's worker claims tasks of every
 * type that such a bean (or a {@link BlockingTasklaneHandler}) names.
 */
public interface TasklaneHandler extends TaskHandler {

    /** The task type this bean handles. */
    String type();
}
