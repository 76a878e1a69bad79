package dev.tasklane.events;

import java.nio.charset.StandardCharsets;

import dev.tasklane.support.WireTime;

/**
 * Server-Sent Event frames, as bytes ready to write. An event's frame is built once per replica
 * (its reader does it for the live stream) and shared by every subscriber, so a thousand
 * subscribers cost one JSON document per event, not a thousand. The detail the database stored as
 * a JSON object is spliced in as it is, never parsed again.
 */
public final class SseFrames {

    /**
     * The first frame of every stream, written as soon as the stream is subscribed to the live
     * events: it makes the response's headers go out (EventSource's {@code open} fires, curl shows
     * the connection) and tells a browser to reconnect after a second if the stream breaks.
     */
    public static final byte[] OPENED = ": connected\nretry: 1000\n\n".getBytes(StandardCharsets.UTF_8);

    /** Sent on idle streams, so that proxies and clients see the connection alive. */
    public static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.UTF_8);

    private SseFrames() {
    }

    /** {@code id:}, {@code event:} and {@code data:} lines of one event, as the contract shows them. */
    public static byte[] of(TaskEvent event) {
        StringBuilder frame = new StringBuilder(160 + event.detail().length())
                .append("id: ").append(event.id())
                .append("\nevent: ").append(event.name())
                .append("\ndata: {\"eventId\":").append(event.id())
                .append(",\"taskId\":").append(event.taskId())
                .append(",\"queue\":");
        quote(frame, event.queue()).append(",\"type\":");
        quote(frame, event.taskType()).append(",\"concurrencyKey\":");
        if (event.concurrencyKey() == null) {
            frame.append("null");
        } else {
            quote(frame, event.concurrencyKey());
        }
        if (event.schedule() != null) {
            quote(frame.append(",\"schedule\":"), event.schedule())
                    .append(",\"scheduledFor\":\"").append(WireTime.format(event.scheduledFor())).append('"');
        }
        frame.append(",\"state\":");
        quote(frame, event.state()).append(",\"attempt\":").append(event.attempt())
                .append(",\"at\":\"").append(WireTime.format(event.at())).append('"');
        String detail = event.detail().strip();
        // The stored detail is a JSON object on one line: its members follow the common ones.
        if (detail.length() > 2) {
            frame.append(',').append(detail, 1, detail.length() - 1);
        }
        return frame.append("}\n\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Retention pruned events after the subscriber's cursor: no {@code id:} line, so that the
     * client's cursor stays on the last event it really received.
     */
    public static byte[] gap(long prunedThrough) {
        return ("event: gap\ndata: {\"prunedThrough\":" + prunedThrough + "}\n\n").getBytes(StandardCharsets.UTF_8);
    }

    private static StringBuilder quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"');
    }
}
