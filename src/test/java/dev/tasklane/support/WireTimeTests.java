package dev.tasklane.support;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class WireTimeTests {

    private static final DateTimeFormatter PATTERN =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    @Test
    void writesUtcWithSixFractionalDigitsTruncatingNanoseconds() {
        assertThat(WireTime.format(Instant.parse("2026-12-02T10:00:00Z"))).isEqualTo("2026-12-02T10:00:00.000000Z");
        assertThat(WireTime.format(Instant.parse("2024-02-29T23:59:59.123456789Z")))
                .isEqualTo("2024-02-29T23:59:59.123456Z");
        assertThat(WireTime.format(Instant.parse("1969-12-31T23:59:59.999999Z"))).isEqualTo("1969-12-31T23:59:59.999999Z");
        assertThat(WireTime.format(null)).isNull();
    }

    @Test
    void agreesWithTheFormatterPatternAcrossTheYearsTheDatabaseStores() {
        SplittableRandom random = new SplittableRandom(7);
        long first = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
        long last = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        for (int i = 0; i < 100_000; i++) {
            Instant instant = Instant.ofEpochSecond(random.nextLong(first, last + 1), random.nextInt(1_000_000_000));
            assertThat(WireTime.format(instant)).isEqualTo(PATTERN.format(instant));
        }
        for (String edge : new String[] {"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
                "-0001-12-31T23:59:59Z", "+10000-01-01T00:00:00Z", "1970-01-01T00:00:00Z"}) {
            Instant instant = Instant.parse(edge);
            assertThat(WireTime.format(instant)).as(edge).isEqualTo(PATTERN.format(instant));
        }
    }
}
