package dev.tasklane.client;

import tools.jackson.databind.JsonNode;

/**
 * The service answered with an error: {@code status} and its problem document (RFC 9457), whose
 * {@code detail} is the message. A 409 carries the task's current {@code state} in the problem.
 */
public class TasklaneException extends RuntimeException {

    private final int status;
    private final JsonNode problem;

    public TasklaneException(int status, JsonNode problem) {
        super(status + " " + text(problem, "title") + ": " + text(problem, "detail"));
        this.status = status;
        this.problem = problem;
    }

    public int status() {
        return status;
    }

    public JsonNode problem() {
        return problem;
    }

    private static String text(JsonNode problem, String field) {
        JsonNode value = problem == null ? null : problem.get(field);
        return value == null || value.isNull() ? "" : value.asString();
    }
}
