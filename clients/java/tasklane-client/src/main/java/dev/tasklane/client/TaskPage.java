package dev.tasklane.client;

import java.util.List;

/** A page of {@code GET /tasks}: pass {@code next} back as {@link TaskQuery#before(String)}; null at the end. */
public record TaskPage(List<Task> tasks, String next) {
}
