package dev.tasklane.api;

import java.util.List;

/** Well-formed JSON with values the contract does not allow: a 422 naming every bad field. */
final class InvalidRequestException extends RuntimeException {

    private final List<FieldError> errors;

    InvalidRequestException(List<FieldError> errors) {
        super(errors.size() == 1 ? errors.get(0).field() + ": " + errors.get(0).message()
                : errors.size() + " fields are invalid");
        this.errors = List.copyOf(errors);
    }

    InvalidRequestException(String field, String message) {
        this(List.of(new FieldError(field, message)));
    }

    List<FieldError> errors() {
        return errors;
    }
}
