package dev.tasklane.queue;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One page of tasks, newest first.
 *
 * @param tasks the tasks
 * @param nextBeforeId the id to continue below, or null on the last page
 */
public record TaskPage(List<Task> tasks, @Nullable Long nextBeforeId) {

    public TaskPage {
        tasks = List.copyOf(tasks);
    }
}
