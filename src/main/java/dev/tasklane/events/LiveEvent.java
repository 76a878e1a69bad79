package dev.tasklane.events;

import org.jspecify.annotations.Nullable;

/**
 * What flows through a stream before it is written: an event with its frame (built once, shared
 * by every subscriber) and the id of the event put on the live stream just before it, so that a
 * subscriber that sees {@code previousId} differ from the last id it saw knows it missed
 * something; or, without an event, a control frame ({@link #CONTROL}: the stream's first frame, a
 * gap) that passes straight through.
 *
 * @param event the event, or null for a control frame
 * @param frame the bytes to write
 * @param previousId the id of the previous event on the live stream, or one of the markers below
 */
public record LiveEvent(@Nullable TaskEvent event, byte[] frame, long previousId) {

    /** Marks events read back from the table rather than taken from the live stream. */
    static final long REPLAYED = -2;

    /** Marks the first live event a subscriber's full buffer dropped: it must catch up from the table. */
    static final long OVERFLOWED = -3;

    /** Marks a frame that is no event. */
    static final long CONTROL = -4;

    static LiveEvent control(byte[] frame) {
        return new LiveEvent(null, frame, CONTROL);
    }

    static LiveEvent replayed(TaskEvent event) {
        return new LiveEvent(event, SseFrames.of(event), REPLAYED);
    }

    /** What this item costs a subscriber's buffer: its frame, and a little for the item itself. */
    int weight() {
        return frame.length + 64;
    }
}
