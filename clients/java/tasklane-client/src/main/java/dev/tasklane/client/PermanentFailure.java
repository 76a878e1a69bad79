package dev.tasklane.client;

/** Thrown by a handler: the task fails now, without the retries it has left. */
public class PermanentFailure extends RuntimeException {

    public PermanentFailure(String message) {
        super(message);
    }

    public PermanentFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
