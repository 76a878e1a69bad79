package dev.tasklane.api;

/** A field of the wrong JSON type (or a body that is no JSON object): a 400. */
final class MalformedRequestException extends RuntimeException {

    private final FieldError error;

    MalformedRequestException(String field, String message) {
        super(field + ": " + message);
        this.error = new FieldError(field, message);
    }

    FieldError error() {
        return error;
    }
}
