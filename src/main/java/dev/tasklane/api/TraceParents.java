package dev.tasklane.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The W3C {@code traceparent} header of an enqueue, kept with its tasks when it is valid. An
 * invalid one is dropped, not refused: tracing must never cost a caller its enqueue, and the W3C
 * recommendation says to ignore what cannot be parsed.
 *
 * <p>A version above {@code 00} is read as the recommendation asks of a vendor that does not know
 * it: the first 55 characters in version 00's layout, followed by nothing or by a dash, and of the
 * flags only the sampled bit. It is kept as the version 00 header it reads as, which is what the
 * task's spans continue and what a client reading the task can parse. Version {@code ff} is
 * invalid.
 */
final class TraceParents {

    private static final Pattern FIELDS = Pattern.compile(
            "(?!ff)([0-9a-f]{2})-((?!0{32})[0-9a-f]{32})-((?!0{16})[0-9a-f]{16})-([0-9a-f]{2})(-.*)?", Pattern.DOTALL);
    private static final String VERSION_00 = "00";
    private static final int SAMPLED = 0x01;

    private TraceParents() {
    }

    static @Nullable String valid(@Nullable String header) {
        if (header == null) {
            return null;
        }
        String value = header.trim();
        Matcher fields = FIELDS.matcher(value);
        if (!fields.matches()) {
            return null;
        }
        if (VERSION_00.equals(fields.group(1))) {
            return fields.group(5) == null ? value : null; // version 00 has exactly these four fields
        }
        boolean sampled = (Integer.parseInt(fields.group(4), 16) & SAMPLED) != 0;
        return VERSION_00 + "-" + fields.group(2) + "-" + fields.group(3) + (sampled ? "-01" : "-00");
    }
}
