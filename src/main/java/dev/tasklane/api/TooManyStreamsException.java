package dev.tasklane.api;

/** This replica already serves {@code TASKLANE_SSE_MAX_SUBSCRIBERS} event streams. */
final class TooManyStreamsException extends RuntimeException {

    TooManyStreamsException(int max) {
        super("This replica already serves " + max + " event streams; retry in a few seconds"
                + " (another replica may have room)", null, false, false);
    }
}
