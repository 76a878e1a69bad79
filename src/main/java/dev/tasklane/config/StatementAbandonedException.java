package dev.tasklane.config;

import java.time.Duration;

import io.r2dbc.spi.R2dbcTimeoutException;

/**
 * A statement the database did not answer within the statement timeout and its margin: the
 * service cancelled it and no longer waits, but cannot know whether it took effect (a write may
 * have committed just before, or its answer may be what got lost). Transient, like any timeout.
 */
public final class StatementAbandonedException extends R2dbcTimeoutException {

    StatementAbandonedException(Duration waited) {
        super("no answer from the database within " + waited.toMillis() + " ms; the statement was cancelled"
                + " and whether it took effect is unknown");
    }

    /** Whether {@code failure}, or anything that caused it, is an abandoned statement. */
    public static boolean causedBy(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof StatementAbandonedException) {
                return true;
            }
        }
        return false;
    }
}
