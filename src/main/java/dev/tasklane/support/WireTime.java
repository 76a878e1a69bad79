package dev.tasklane.support;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import org.jspecify.annotations.Nullable;

/** Timestamps on the wire: ISO-8601 UTC with the six fractional digits the database stores. */
public final class WireTime {

    private static final DateTimeFormatter MICROS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private WireTime() {
    }

    public static @Nullable String format(@Nullable Instant instant) {
        return instant == null ? null : MICROS.format(instant);
    }
}
