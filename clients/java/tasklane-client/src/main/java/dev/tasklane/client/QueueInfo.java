package dev.tasklane.client;

import tools.jackson.databind.JsonNode;

/** An entry of {@code GET /queues}; {@code limits} and {@code heldBack} as the service gives them. */
public record QueueInfo(String name, long queued, long running, long succeeded, long failed, long cancelled,
                        Double oldestQueuedAgeSeconds, boolean paused, boolean workedInProcess, JsonNode limits,
                        JsonNode heldBack) {
}
