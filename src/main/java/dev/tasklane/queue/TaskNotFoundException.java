package dev.tasklane.queue;

/** No task has this id (never had, or it was deleted or pruned). */
public final class TaskNotFoundException extends RuntimeException {

    public TaskNotFoundException(long taskId) {
        this(Long.toString(taskId));
    }

    public TaskNotFoundException(String taskId) {
        super("Task " + taskId + " does not exist");
    }
}
