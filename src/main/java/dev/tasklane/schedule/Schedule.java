package dev.tasklane.schedule;

import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * A schedule as stored.
 *
 * @param name its name (the queue-name pattern)
 * @param definition what its PUT gave
 * @param createdAt when it was first created
 * @param updatedAt its last PUT
 * @param resumedAt its last resume, or null
 * @param settledUntil fire times at or before this are settled (made, skipped, or before the
 *        latest of its creation, last PUT and last resume)
 * @param lastFire the newest fire time it has settled by making a task or skipping one, or null
 */
public record Schedule(String name, Definition definition, Instant createdAt, Instant updatedAt,
                       @Nullable Instant resumedAt, Instant settledUntil, @Nullable LastFire lastFire) {

    /** What to do at a fire time while the previous task of the schedule is not terminal. */
    public enum Overlap {
        ALLOW, SKIP;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Which of the fire times missed while no replica ran (longer than the grace) are made up for. */
    public enum CatchUp {
        NONE, LATEST, ALL;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What a PUT sets. */
    public record Definition(Cron cron, ZoneId timezone, String queue, TaskTemplate task, Overlap overlap,
                             CatchUp catchUp, boolean paused) {
    }

    /** A fire time settled, with what became of it. */
    public record LastFire(Instant at, String outcome, @Nullable Long taskId) {
    }

    /** The next {@code count} fire times from {@code now} on (after what is settled). */
    public List<Instant> nextRuns(Instant now, int count) {
        Instant from = settledUntil.isAfter(now) ? settledUntil : now;
        return definition.cron().fireTimes(from, null, definition.timezone(), count);
    }
}
