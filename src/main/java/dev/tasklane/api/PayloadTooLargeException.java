package dev.tasklane.api;

/** A payload or a request body over its configured limit: a 413. */
final class PayloadTooLargeException extends RuntimeException {

    PayloadTooLargeException(String message) {
        super(message);
    }
}
