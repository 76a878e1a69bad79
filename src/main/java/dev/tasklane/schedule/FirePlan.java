package dev.tasklane.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What one round of the scheduler does for one schedule: the fire times to make tasks for, and
 * how far the schedule is settled afterwards. A fire time due no longer than the grace ago is on
 * time and always made; older ones were missed (no replica ran) and {@code catchUp} decides.
 *
 * @param fireTimes ascending
 * @param settledUntil every fire time at or before this is settled after the round
 * @param nextFireAt the first fire time after that, or null if the cron has none
 */
record FirePlan(List<Instant> fireTimes, Instant settledUntil, @Nullable Instant nextFireAt) {

    /** How many missed fire times {@code catchUp: all} makes at most: the latest ones. */
    static final int MAX_CATCH_UP = 100;

    static FirePlan of(Cron cron, ZoneId zone, Schedule.CatchUp catchUp, Instant settledUntil, Instant now,
                       Duration grace) {
        if (!now.isAfter(settledUntil)) {
            return new FirePlan(List.of(), settledUntil, cron.next(settledUntil, zone).orElse(null));
        }
        Instant missedUntil = now.minus(grace);
        int keepMissed = switch (catchUp) {
            case NONE -> 0;
            case LATEST -> 1;
            case ALL -> MAX_CATCH_UP;
        };
        Instant from = keepMissed == 0 && missedUntil.isAfter(settledUntil) ? missedUntil : settledUntil;
        Deque<Instant> missed = new ArrayDeque<>();
        List<Instant> onTime = new ArrayList<>();
        cron.forEachFireTime(from, now, zone, fireTime -> {
            if (fireTime.isAfter(missedUntil)) {
                onTime.add(fireTime);
            } else if (keepMissed > 0) {
                if (missed.size() == keepMissed) {
                    missed.removeFirst();
                }
                missed.addLast(fireTime);
            }
        });
        List<Instant> fire = new ArrayList<>(missed);
        fire.addAll(onTime);
        return new FirePlan(List.copyOf(fire), now, cron.next(now, zone).orElse(null));
    }
}
