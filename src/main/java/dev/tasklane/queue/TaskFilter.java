package dev.tasklane.queue;

import org.jspecify.annotations.Nullable;

/**
 * What {@code GET /tasks} selects: every field is optional; {@code beforeId} continues a page.
 */
public record TaskFilter(@Nullable String queue, @Nullable TaskState state, @Nullable String type,
                         @Nullable String concurrencyKey, @Nullable String schedule,
                         @Nullable Long beforeId, int limit) {
}
