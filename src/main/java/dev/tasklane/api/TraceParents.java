package dev.tasklane.api;

import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The W3C {@code traceparent} header of an enqueue, kept with its tasks when it is valid. An
 * invalid one is dropped, not refused: tracing must never cost a caller its enqueue, and the W3C
 * recommendation says to ignore what cannot be parsed.
 */
final class TraceParents {

    private static final Pattern VERSION_00 = Pattern.compile("00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}");

    private TraceParents() {
    }

    static @Nullable String valid(@Nullable String header) {
        if (header == null) {
            return null;
        }
        String value = header.trim();
        return VERSION_00.matcher(value).matches() ? value : null;
    }
}
