package dev.tasklane.api;

import dev.tasklane.queue.TaskNotFoundException;

/** Task ids in paths: anything that is not a positive long names no task, so it is a 404. */
final class TaskIds {

    private TaskIds() {
    }

    static long parse(String id) {
        try {
            long value = Long.parseLong(id);
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // falls through to not found
        }
        throw new TaskNotFoundException(id);
    }
}
