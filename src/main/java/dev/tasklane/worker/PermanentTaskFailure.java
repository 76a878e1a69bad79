package dev.tasklane.worker;

/** A failure that no retry can fix: the task fails at once, whatever attempts are left. */
public class PermanentTaskFailure extends RuntimeException {

    public PermanentTaskFailure(String message) {
        super(message);
    }

    public PermanentTaskFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
