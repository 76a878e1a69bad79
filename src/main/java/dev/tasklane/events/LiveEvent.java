package dev.tasklane.events;

/**
 * An event as the reader puts it on the live stream, with the id of the event it put there just
 * before: a subscriber that sees {@code previousId} differ from the last id it saw knows it missed
 * something and catches up from the table.
 *
 * @param event the event
 * @param previousId the id of the previous event on the live stream
 */
public record LiveEvent(TaskEvent event, long previousId) {

    /** Marks events read back from the table rather than taken from the live stream. */
    static final long REPLAYED = -2;

    /** Marks the first live event a subscriber's full buffer dropped: it must catch up from the table. */
    static final long OVERFLOWED = -3;
}
