package dev.tasklane.schedule;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Vixie cron semantics, and daylight saving in the fire times, on fixed instants. */
final class CronTests {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    @Test
    void aDaily0230InBerlinFiresAtThreeOnTheSpringForwardDayAndOnceOnTheFallBackDay() {
        Cron cron = Cron.parse("30 2 * * *");
        // 2030-03-31: 02:00 CET becomes 03:00 CEST; 02:30 does not exist
        assertThat(cron.fireTimes(Instant.parse("2030-03-30T12:00:00Z"), Instant.parse("2030-04-01T12:00:00Z"), BERLIN, 10))
                .containsExactly(Instant.parse("2030-03-31T01:00:00Z"), Instant.parse("2030-04-01T00:30:00Z"));
        // 2030-10-27: 03:00 CEST becomes 02:00 CET; 02:30 happens twice, fires at the first
        assertThat(cron.fireTimes(Instant.parse("2030-10-26T12:00:00Z"), Instant.parse("2030-10-28T12:00:00Z"), BERLIN, 10))
                .containsExactly(Instant.parse("2030-10-27T00:30:00Z"), Instant.parse("2030-10-28T01:30:00Z"));
    }

    @Test
    void anHourlyScheduleInNewYorkFires23TimesOnTheSpringDayAnd25OnTheFallDay() {
        Cron cron = Cron.parse("@hourly");
        assertThat(firesOnLocalDay(cron, "2030-03-10", NEW_YORK)).hasSize(23);
        assertThat(firesOnLocalDay(cron, "2030-11-03", NEW_YORK)).hasSize(25)
                .contains(Instant.parse("2030-11-03T05:00:00Z"), Instant.parse("2030-11-03T06:00:00Z")); // 01:00 EDT and EST
        assertThat(firesOnLocalDay(cron, "2030-11-04", NEW_YORK)).hasSize(24);
    }

    @Test
    void aFixedHourInTheRepeatedHourFiresOnlyAtItsFirstOccurrence() {
        assertThat(firesOnLocalDay(Cron.parse("*/15 1 * * *"), "2030-11-03", NEW_YORK)).containsExactly(
                Instant.parse("2030-11-03T05:00:00Z"), Instant.parse("2030-11-03T05:15:00Z"),
                Instant.parse("2030-11-03T05:30:00Z"), Instant.parse("2030-11-03T05:45:00Z"));
    }

    @Test
    void everyFireTimeInTheGapRunsOnceAtTheFirstInstantAfterIt() {
        assertThat(firesOnLocalDay(Cron.parse("*/15 2 * * *"), "2030-03-10", NEW_YORK))
                .containsExactly(Instant.parse("2030-03-10T07:00:00Z")); // 03:00 EDT
    }

    @Test
    void dayOfMonthAndDayOfWeekCombineWithOrWhenBothAreRestricted() {
        // the 13th, and every Friday, of December 2030 (Fridays: 6, 13, 20, 27)
        List<Instant> fires = Cron.parse("0 0 13 * 5").fireTimes(Instant.parse("2030-12-01T00:00:00Z"),
                Instant.parse("2030-12-31T23:59:00Z"), ZoneOffset.UTC, 100);
        assertThat(fires).extracting(i -> i.atZone(ZoneOffset.UTC).getDayOfMonth()).containsExactly(6, 13, 20, 27);
        List<Instant> mondaysOrFirst = Cron.parse("0 0 1 * mon").fireTimes(Instant.parse("2030-11-30T23:59:00Z"),
                Instant.parse("2030-12-31T23:59:00Z"), ZoneOffset.UTC, 100);
        assertThat(mondaysOrFirst).extracting(i -> i.atZone(ZoneOffset.UTC).getDayOfMonth()).containsExactly(1, 2, 9, 16, 23, 30);
    }

    @Test
    void aStarredDayFieldCombinesWithAnd() {
        // */2 starts with *: odd days that are also Fridays
        List<Instant> fires = Cron.parse("0 0 */2 * fri").fireTimes(Instant.parse("2030-12-01T00:00:00Z"),
                Instant.parse("2030-12-31T23:59:00Z"), ZoneOffset.UTC, 100);
        assertThat(fires).extracting(i -> i.atZone(ZoneOffset.UTC).getDayOfMonth()).containsExactly(13, 27);
    }

    @Test
    void macrosRangesStepsListsAndNamesParse() {
        Instant after = Instant.parse("2030-06-15T10:07:00Z");
        assertThat(Cron.parse("@yearly").next(after, ZoneOffset.UTC)).contains(Instant.parse("2031-01-01T00:00:00Z"));
        assertThat(Cron.parse("@monthly").next(after, ZoneOffset.UTC)).contains(Instant.parse("2030-07-01T00:00:00Z"));
        assertThat(Cron.parse("@weekly").next(after, ZoneOffset.UTC)).contains(Instant.parse("2030-06-16T00:00:00Z"));
        assertThat(Cron.parse("@daily").next(after, ZoneOffset.UTC)).contains(Instant.parse("2030-06-16T00:00:00Z"));
        assertThat(Cron.parse("*/5 * * * *").next(after, ZoneOffset.UTC)).contains(Instant.parse("2030-06-15T10:10:00Z"));
        assertThat(Cron.parse("10-40/15 9-17 * JUN-aug 1-5").fireTimes(after, Instant.parse("2030-06-17T10:00:00Z"),
                ZoneOffset.UTC, 5)).containsExactly(Instant.parse("2030-06-17T09:10:00Z"),
                Instant.parse("2030-06-17T09:25:00Z"), Instant.parse("2030-06-17T09:40:00Z"));
        assertThat(Cron.parse("0 12 * * 7").next(after, ZoneOffset.UTC)).contains(Instant.parse("2030-06-16T12:00:00Z"));
        assertThat(Cron.parse("0 0 29 2 *").next(after, ZoneOffset.UTC)).contains(Instant.parse("2032-02-29T00:00:00Z"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
            "* * * * 8", "5-1 * * * *", "*/0 * * * *", "a * * * *", "@reboot", "0 0 30 2 *", "1,,2 * * * *"})
    void invalidExpressionsAreRefusedWithAReason(String expression) {
        assertThatThrownBy(() -> Cron.parse(expression)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("null");
    }

    private static List<Instant> firesOnLocalDay(Cron cron, String day, ZoneId zone) {
        java.time.LocalDate date = java.time.LocalDate.parse(day);
        return cron.fireTimes(date.atStartOfDay(zone).toInstant().minusNanos(1),
                date.plusDays(1).atStartOfDay(zone).toInstant().minusNanos(1), zone, 100);
    }
}
