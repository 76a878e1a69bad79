package dev.tasklane.schedule;

/** Every statement on {@code schedule} and {@code schedule_fire}; run only by {@link ScheduleStore}. */
final class ScheduleSql {

    private ScheduleSql() {
    }

    /** The database's clock as it reads when asked, not as of a transaction's start. */
    static final String NOW = "SELECT clock_timestamp() AS now";

    /**
     * Creates or replaces a schedule; {@code created} says which (a row version made by this
     * statement's insert has no xmax). A replace counts missed fire times from now on, as a creation does.
     */
    static final String PUT = """
            INSERT INTO schedule (name, cron, timezone, queue, task, overlap, catch_up, paused, created_at, updated_at,
                                  settled_until, next_fire_at)
            VALUES (:name, :cron, :timezone, :queue, :task::jsonb, :overlap, :catchUp, :paused, :now, :now, :now,
                    :nextFireAt)
            ON CONFLICT (name) DO UPDATE
            SET cron = excluded.cron, timezone = excluded.timezone, queue = excluded.queue, task = excluded.task,
                overlap = excluded.overlap, catch_up = excluded.catch_up, paused = excluded.paused,
                updated_at = excluded.updated_at, settled_until = excluded.settled_until,
                next_fire_at = excluded.next_fire_at
            RETURNING (xmax = 0) AS created
            """;

    private static final String WITH_LAST_FIRE = """
            SELECT s.*, f.fire_at AS last_fire_at, f.outcome AS last_outcome, f.task_id AS last_task_id
            FROM schedule s
            LEFT JOIN LATERAL (SELECT * FROM schedule_fire WHERE schedule = s.name ORDER BY fire_at DESC LIMIT 1) f
                ON true
            """;

    static final String FIND = WITH_LAST_FIRE + "WHERE s.name = :name";

    static final String LIST = WITH_LAST_FIRE + "ORDER BY s.name";

    static final String DELETE = "DELETE FROM schedule WHERE name = :name RETURNING name";

    /** The schedule, locked for a pause or resume. */
    static final String LOCK = "SELECT *, NULL::timestamptz AS last_fire_at FROM schedule WHERE name = :name FOR UPDATE";

    static final String SET_PAUSED = """
            UPDATE schedule
            SET paused = :paused, resumed_at = coalesce(:resumedAt, resumed_at), settled_until = :settledUntil,
                next_fire_at = :nextFireAt
            WHERE name = :name
            """;

    /** Names of the schedules with a fire time due, earliest first. */
    static final String DUE = """
            SELECT name FROM schedule
            WHERE NOT paused AND next_fire_at <= :now
            ORDER BY next_fire_at
            LIMIT :limit
            """;

    /**
     * The schedule, locked for one round of firing, if it is still due; a replica already firing
     * it holds the lock, and this one moves on.
     */
    static final String LOCK_DUE = """
            SELECT *, NULL::timestamptz AS last_fire_at FROM schedule
            WHERE name = :name AND NOT paused AND next_fire_at <= :now
            FOR UPDATE SKIP LOCKED
            """;

    /**
     * Claims one fire time: the primary key lets exactly one transaction ever insert it, so it
     * becomes at most one task whatever the replicas do. With overlap skip, it is recorded as
     * skipped while the schedule's newest task is not terminal. Answers nothing when the fire
     * time was claimed before.
     */
    static final String CLAIM_FIRE = """
            INSERT INTO schedule_fire (schedule, fire_at, outcome)
            SELECT :name, :fireAt,
                   CASE WHEN :skipOverlap AND EXISTS (
                            SELECT 1 FROM (SELECT state FROM task WHERE schedule = :name ORDER BY id DESC LIMIT 1) newest
                            WHERE newest.state IN ('queued', 'running'))
                        THEN 'skipped' ELSE 'enqueued' END
            ON CONFLICT (schedule, fire_at) DO NOTHING
            RETURNING outcome
            """;

    static final String SET_FIRE_TASK = """
            UPDATE schedule_fire SET task_id = :taskId WHERE schedule = :name AND fire_at = :fireAt
            """;

    static final String SETTLE = """
            UPDATE schedule SET settled_until = :settledUntil, next_fire_at = :nextFireAt WHERE name = :name
            """;

    /**
     * Fire times older than the cutoff that their schedule has settled: no round reads them
     * again, since every round starts after settled_until.
     */
    static final String PRUNE_FIRES = """
            DELETE FROM schedule_fire f
            USING (SELECT f2.schedule, f2.fire_at FROM schedule_fire f2 JOIN schedule s ON s.name = f2.schedule
                   WHERE f2.fire_at < :before AND f2.fire_at < s.settled_until
                   LIMIT :limit) old
            WHERE f.schedule = old.schedule AND f.fire_at = old.fire_at
            """;
}
