package dev.tasklane.queue;

/** The task's current state does not allow what was asked. */
public final class IllegalTransitionException extends RuntimeException {

    private final TaskState state;

    public IllegalTransitionException(long taskId, TaskState state, String action) {
        super("Task " + taskId + " is " + state.wireName() + " and cannot be " + action);
        this.state = state;
    }

    public TaskState state() {
        return state;
    }
}
