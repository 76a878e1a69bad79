package dev.tasklane.events;

/**
 * One NOTIFY received on the replica's LISTEN connection.
 *
 * @param channel the channel
 * @param payload the payload text
 */
public record Notification(String channel, String payload) {
}
