package dev.tasklane.client.spring;

import dev.tasklane.client.BlockingTaskHandler;

/**
 * A bean that handles one task type with blocking code: it runs on a thread that may block,
 * never on an event loop.
 */
public interface BlockingTasklaneHandler extends BlockingTaskHandler {

    /** The task type this bean handles. */
    String type();
}
