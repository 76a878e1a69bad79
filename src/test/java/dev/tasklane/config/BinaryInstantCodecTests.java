package dev.tasklane.config;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.SplittableRandom;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.r2dbc.postgresql.codec.DefaultCodecs;
import io.r2dbc.postgresql.codec.PostgresqlObjectId;
import io.r2dbc.postgresql.message.Format;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/** Binary timestamps read without the driver's detour, in PostgreSQL's calendar. */
final class BinaryInstantCodecTests {

    private static final int TIMESTAMPTZ = PostgresqlObjectId.TIMESTAMPTZ.getObjectId();
    /** PostgreSQL's range of timestamptz: 4713 BC to 294276 AD, in microseconds from 2000-01-01. */
    private static final long LOWEST = -211_813_488_000_000_000L;
    private static final long HIGHEST = 9_214_646_400_000_000_000L;
    /** 1582-10-15, the Gregorian calendar's first day, where the driver's Julian shift stops. */
    private static final long REFORM = -13_165_977_600_000_000L;
    private static final long POSTGRES_EPOCH = 946_684_800L;

    @Test
    void readsTimestampsFromTheGregorianReformOnAsTheDriversOwnCodecDoes() {
        DefaultCodecs driver = new DefaultCodecs(ByteBufAllocator.DEFAULT);
        DefaultCodecs withCodec = withCodec();
        long[] edges = {0, 1, -1, 999_999, -999_999, 1_000_000, -1_000_001, HIGHEST, Long.MAX_VALUE,
                -946_684_800_000_000L, // 1970-01-01
                REFORM};
        for (long micros : edges) {
            assertThat(decode(withCodec, micros)).as("%d µs", micros).isEqualTo(decode(driver, micros));
        }
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            long micros = random.nextLong(REFORM, HIGHEST);
            assertThat(decode(withCodec, micros)).as("%d µs", micros).isEqualTo(decode(driver, micros));
        }
    }

    /** PostgreSQL and java.time both count in the proleptic Gregorian calendar; the driver turns Julian before the reform. */
    @Test
    void readsEarlierTimestampsInTheCalendarPostgreSQLWritesThem() {
        DefaultCodecs withCodec = withCodec();
        for (String at : new String[] {"1582-10-14T23:59:59.999999Z", "1582-10-04T12:00:00Z", "1500-02-28T00:00:00Z",
                "1500-03-01T00:00:00.000001Z", "0001-01-01T00:00:00Z", "0000-12-31T23:59:59Z", "-4712-01-01T00:00:00Z"}) {
            Instant instant = Instant.parse(at);
            long micros = (instant.getEpochSecond() - POSTGRES_EPOCH) * 1_000_000 + instant.getNano() / 1000;
            assertThat(decode(withCodec, micros)).as(at).isEqualTo(instant);
        }
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 200_000; i++) {
            long micros = random.nextLong(LOWEST, HIGHEST);
            assertThat(decode(withCodec, micros)).as("%d µs", micros)
                    .isEqualTo(Instant.ofEpochSecond(POSTGRES_EPOCH).plus(micros, ChronoUnit.MICROS));
        }
    }

    @Test
    void leavesTextNullsAndParametersToTheDriver() {
        DefaultCodecs driver = new DefaultCodecs(ByteBufAllocator.DEFAULT);
        DefaultCodecs withCodec = withCodec();
        ByteBuf text = Unpooled.copiedBuffer("2026-12-07 03:30:00.123456+00", java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(withCodec.<Instant>decode(text, TIMESTAMPTZ, Format.FORMAT_TEXT, Instant.class))
                .isEqualTo(Instant.parse("2026-12-07T03:30:00.123456Z"));
        assertThat(withCodec.<Instant>decode(null, TIMESTAMPTZ, Format.FORMAT_BINARY, Instant.class)).isNull();
        Instant at = Instant.parse("2026-12-07T03:30:00.123456Z");
        // Its format, type and kind of value (the bytes come later, on subscription)
        assertThat(withCodec.encode(at).toString()).isEqualTo(driver.encode(at).toString());
        assertThat(withCodec.encodeNull(Instant.class).toString()).isEqualTo(driver.encodeNull(Instant.class).toString());
        // An OffsetDateTime is still the driver's, to read and to write.
        assertThat(withCodec.preferredType(TIMESTAMPTZ, Format.FORMAT_BINARY))
                .isEqualTo(driver.preferredType(TIMESTAMPTZ, Format.FORMAT_BINARY));
    }

    @Test
    void isTheCodecThatReadsAnInstantOnceRegistered() {
        DefaultCodecs driver = new DefaultCodecs(ByteBufAllocator.DEFAULT);
        DefaultCodecs withCodec = withCodec();
        assertThat(withCodec.iterator().next()).isInstanceOf(BinaryInstantCodec.class);
        // The driver's detour allocates an OffsetDateTime and more per value; this codec one Instant.
        long warm = allocatedPerDecode(driver) + allocatedPerDecode(withCodec);
        assertThat(warm).isPositive();
        assertThat(allocatedPerDecode(withCodec)).isLessThan(allocatedPerDecode(driver) / 2);
    }

    private static long allocatedPerDecode(DefaultCodecs codecs) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuf buffer = Unpooled.buffer(8);
        int rounds = 20_000;
        long before = threads.getCurrentThreadAllocatedBytes();
        long sum = 0;
        for (int i = 0; i < rounds; i++) {
            buffer.clear().writeLong(i * 1_000_003L);
            sum += codecs.<Instant>decode(buffer, TIMESTAMPTZ, Format.FORMAT_BINARY, Instant.class).getNano();
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        return allocated / rounds + (sum == 42 ? 1 : 0);
    }

    private static DefaultCodecs withCodec() {
        DefaultCodecs codecs = new DefaultCodecs(ByteBufAllocator.DEFAULT);
        Mono.from(BinaryInstantCodec.registrar().register(null, ByteBufAllocator.DEFAULT, codecs)).block();
        return codecs;
    }

    private static Instant decode(DefaultCodecs codecs, long micros) {
        return codecs.decode(Unpooled.buffer(8).writeLong(micros), TIMESTAMPTZ, Format.FORMAT_BINARY, Instant.class);
    }
}
