package dev.tasklane.api;

/**
 * One invalid field of a request, named by its JSON path ({@code tasks[3].type}).
 *
 * @param field the JSON path of the field
 * @param message what is wrong with it
 */
public record FieldError(String field, String message) {
}
