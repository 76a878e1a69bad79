package dev.tasklane.schedule;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * A standard five-field cron expression (minute, hour, day of month, month, day of week) with
 * Vixie cron's semantics, and the fire times it makes in a time zone.
 *
 * <p>Day of month and day of week combine with OR when both are restricted, and with AND when
 * either starts with {@code *} (as Vixie cron decides it). Daylight saving: a local fire time in a
 * gap (spring forward) fires at the first instant after the gap, once however many local times
 * fell into it; a local time that occurs twice (fall back) fires at its first occurrence only,
 * unless the hour field starts with {@code *}, which fires every real hour, both occurrences.
 */
public final class Cron {

    /** How far ahead a fire time is looked for: every leap-day and weekday cycle fits. */
    static final int HORIZON_DAYS = 366 * 28 + 7;

    private static final Map<String, String> MACROS = Map.of(
            "@yearly", "0 0 1 1 *", "@annually", "0 0 1 1 *", "@monthly", "0 0 1 * *",
            "@weekly", "0 0 * * 0", "@daily", "0 0 * * *", "@midnight", "0 0 * * *", "@hourly", "0 * * * *");
    private static final List<String> MONTHS = List.of("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
            "sep", "oct", "nov", "dec");
    private static final List<String> DAYS = List.of("sun", "mon", "tue", "wed", "thu", "fri", "sat");

    private final String text;
    private final BitSet minutes;
    private final BitSet hours;
    private final BitSet daysOfMonth;
    private final BitSet months;
    private final BitSet daysOfWeek;
    private final boolean dayOfMonthStar;
    private final boolean dayOfWeekStar;
    private final boolean everyRealHour;

    private Cron(String text, String[] fields) {
        this.text = text;
        this.minutes = field("minute", fields[0], 0, 59, List.of());
        this.hours = field("hour", fields[1], 0, 23, List.of());
        this.daysOfMonth = field("day of month", fields[2], 1, 31, List.of());
        this.months = field("month", fields[3], 1, 12, MONTHS);
        BitSet weekdays = field("day of week", fields[4], 0, 7, DAYS);
        if (weekdays.get(7)) {
            weekdays.set(0);
        }
        this.daysOfWeek = weekdays;
        this.dayOfMonthStar = fields[2].startsWith("*");
        this.dayOfWeekStar = fields[4].startsWith("*");
        this.everyRealHour = fields[1].startsWith("*");
    }

    /**
     * Parses an expression: five fields separated by spaces, or a macro ({@code @hourly} ...).
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static Cron parse(String expression) {
        String text = expression.strip();
        String expanded = MACROS.getOrDefault(text.toLowerCase(Locale.ROOT), text);
        if (expanded.startsWith("@")) {
            throw new IllegalArgumentException("unknown macro " + text + "; use @yearly, @monthly, @weekly, @daily"
                    + " or @hourly");
        }
        String[] fields = expanded.split("\\s+");
        if (fields.length != 5) {
            throw new IllegalArgumentException("must have 5 fields (minute hour day-of-month month day-of-week),"
                    + " not " + fields.length);
        }
        Cron cron = new Cron(text, fields);
        if (cron.next(Instant.EPOCH.plusSeconds(HORIZON_DAYS * 86_400L), ZoneOffset.UTC).isEmpty()) {
            throw new IllegalArgumentException("never fires (no such day)");
        }
        return cron;
    }

    /** The expression as given. */
    public String text() {
        return text;
    }

    /** The first fire time after {@code after}, if there is one within the horizon. */
    public Optional<Instant> next(Instant after, ZoneId zone) {
        List<Instant> next = fireTimes(after, null, zone, 1);
        return next.isEmpty() ? Optional.empty() : Optional.of(next.get(0));
    }

    /**
     * The fire times in (after, until], ascending, at most {@code max}; {@code until} null: up to
     * the horizon.
     */
    public List<Instant> fireTimes(Instant after, Instant until, ZoneId zone, int max) {
        List<Instant> found = new ArrayList<>();
        forEachFireTime(after, until, zone, instant -> {
            if (found.size() < max) {
                found.add(instant);
            }
        }, max);
        return found;
    }

    /** Calls {@code each} with every fire time in (after, until], ascending. */
    void forEachFireTime(Instant after, Instant until, ZoneId zone, Consumer<Instant> each) {
        forEachFireTime(after, until, zone, each, Integer.MAX_VALUE);
    }

    private void forEachFireTime(Instant after, Instant until, ZoneId zone, Consumer<Instant> each, int max) {
        ZoneRules rules = zone.getRules();
        LocalDate day = LocalDate.ofInstant(after, zone).minusDays(1);
        LocalDate last = until == null ? day.plusDays(HORIZON_DAYS) : LocalDate.ofInstant(until, zone).plusDays(1);
        int emitted = 0;
        for (; !day.isAfter(last) && emitted < max; day = day.plusDays(1)) {
            if (!dayMatches(day)) {
                continue;
            }
            for (Instant instant : instantsOf(day, rules)) {
                if (instant.isAfter(after) && (until == null || !instant.isAfter(until)) && emitted < max) {
                    each.accept(instant);
                    emitted++;
                }
            }
        }
    }

    /** The instants at which the fire times of one local day happen, ascending, each once. */
    private TreeSet<Instant> instantsOf(LocalDate day, ZoneRules rules) {
        TreeSet<Instant> instants = new TreeSet<>();
        for (int hour = hours.nextSetBit(0); hour >= 0; hour = hours.nextSetBit(hour + 1)) {
            for (int minute = minutes.nextSetBit(0); minute >= 0; minute = minutes.nextSetBit(minute + 1)) {
                LocalDateTime local = LocalDateTime.of(day, LocalTime.of(hour, minute));
                List<ZoneOffset> offsets = rules.getValidOffsets(local);
                if (offsets.isEmpty()) {
                    ZoneOffsetTransition gap = rules.getTransition(local);
                    instants.add(gap.getInstant());
                } else {
                    instants.add(local.toInstant(offsets.get(0)));
                    if (offsets.size() == 2 && everyRealHour) {
                        instants.add(local.toInstant(offsets.get(1)));
                    }
                }
            }
        }
        return instants;
    }

    private boolean dayMatches(LocalDate day) {
        if (!months.get(day.getMonthValue())) {
            return false;
        }
        boolean dayOfMonth = daysOfMonth.get(day.getDayOfMonth());
        boolean dayOfWeek = daysOfWeek.get(day.getDayOfWeek() == DayOfWeek.SUNDAY ? 0 : day.getDayOfWeek().getValue());
        return dayOfMonthStar || dayOfWeekStar ? dayOfMonth && dayOfWeek : dayOfMonth || dayOfWeek;
    }

    /** One field: {@code *}, values, ranges and steps, comma-separated; names where given. */
    private static BitSet field(String name, String text, int min, int max, List<String> names) {
        BitSet values = new BitSet(max + 1);
        for (String item : text.split(",", -1)) {
            String range = item;
            int step = 1;
            int slash = item.indexOf('/');
            if (slash >= 0) {
                range = item.substring(0, slash);
                step = number(name, item.substring(slash + 1), 1, max, List.of());
            }
            int from;
            int to;
            if (range.equals("*")) {
                from = min;
                to = max;
            } else {
                int dash = range.indexOf('-', 1);
                from = number(name, dash < 0 ? range : range.substring(0, dash), min, max, names);
                to = dash < 0 ? (slash >= 0 ? max : from) : number(name, range.substring(dash + 1), min, max, names);
                if (to < from) {
                    throw new IllegalArgumentException(name + ": range " + range + " runs backwards");
                }
            }
            for (int value = from; value <= to; value += step) {
                values.set(value);
            }
        }
        return values;
    }

    private static int number(String field, String text, int min, int max, List<String> names) {
        int named = names.indexOf(text.toLowerCase(Locale.ROOT));
        if (named >= 0) {
            return named + min;
        }
        if (!text.matches("[0-9]{1,2}")) {
            throw new IllegalArgumentException(field + ": '" + text + "' is not a number"
                    + (names.isEmpty() ? "" : " or a name"));
        }
        int value = Integer.parseInt(text);
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + ": " + value + " is outside " + min + ".." + max);
        }
        return value;
    }

    @Override
    public String toString() {
        return text;
    }
}
