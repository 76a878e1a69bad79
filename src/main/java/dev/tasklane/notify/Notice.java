package dev.tasklane.notify;

/**
 * One NOTIFY received on the replica's LISTEN connection, or to be sent.
 *
 * @param channel the channel
 * @param payload the payload text
 */
public record Notice(Channel channel, String payload) {
}
