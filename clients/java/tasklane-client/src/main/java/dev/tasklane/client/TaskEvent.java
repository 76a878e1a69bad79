package dev.tasklane.client;

import tools.jackson.databind.JsonNode;

/**
 * One event of a stream: {@code name} is {@code queued}, {@code running}, {@code progress},
 * {@code succeeded}, {@code failed}, {@code cancelled}, or {@code gap} (retention pruned events
 * the stream would have resent: {@code id} is null and {@code data.prunedThrough} says through
 * which id).
 */
public record TaskEvent(Long id, String name, JsonNode data) {

    public static final String GAP = "gap";

    public boolean isGap() {
        return GAP.equals(name);
    }

    /** The task's id, or -1 for a gap. */
    public long taskId() {
        JsonNode taskId = data.get("taskId");
        return taskId == null ? -1 : taskId.longValue();
    }
}
