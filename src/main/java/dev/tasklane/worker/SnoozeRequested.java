package dev.tasklane.worker;

import java.time.Duration;

/**
 * What {@link TaskContext#snooze} signals: the handler asks for its task to run again after
 * {@code delay}, without spending an attempt. A signal, not a failure: it carries no stack trace.
 */
final class SnoozeRequested extends RuntimeException {

    private final Duration delay;

    SnoozeRequested(Duration delay) {
        super("snooze for " + delay, null, false, false);
        this.delay = delay;
    }

    Duration delay() {
        return delay;
    }
}
