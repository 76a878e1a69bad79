package dev.tasklane.queue;

/** Every statement on the {@code queue} table (and the per-queue counts), run by {@link QueueStore}. */
final class QueueSql {

    private QueueSql() {
    }

    /**
     * Per queue: counts by state, when the longest-waiting due task became available, and the
     * pause flag, for every queue that has tasks or a row in {@code queue}. :queue limits it to
     * one queue, or is null for all. It reads every task row of the queues asked for.
     */
    static final String OVERVIEW = """
            WITH counts AS (
                SELECT queue,
                       count(*) FILTER (WHERE state = 'queued') AS queued,
                       count(*) FILTER (WHERE state = 'running') AS running,
                       count(*) FILTER (WHERE state = 'succeeded') AS succeeded,
                       count(*) FILTER (WHERE state = 'failed') AS failed,
                       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
                       min(greatest(created_at, run_at)) FILTER (WHERE state = 'queued' AND run_at <= now())
                           AS oldest_due
                FROM task
                WHERE (CAST(:queue AS text) IS NULL OR queue = :queue)
                GROUP BY queue
            )
            SELECT coalesce(c.queue, q.name) AS name,
                   coalesce(c.queued, 0) AS queued, coalesce(c.running, 0) AS running,
                   coalesce(c.succeeded, 0) AS succeeded, coalesce(c.failed, 0) AS failed,
                   coalesce(c.cancelled, 0) AS cancelled,
                   extract(epoch FROM now() - c.oldest_due)::float8 AS oldest_age_seconds,
                   coalesce(q.paused, false) AS paused
            FROM counts c
            FULL JOIN (SELECT * FROM queue WHERE CAST(:queue AS text) IS NULL OR name = :queue) q ON q.name = c.queue
            ORDER BY 1
            """;

    /**
     * The depth metrics: per queue, how many tasks wait and run, and how long the longest-waiting
     * due task has waited. It reads only the partial indexes' rows (waiting and running tasks),
     * never the finished ones that retention keeps, and lists paused queues too.
     */
    static final String DEPTH = """
            WITH waiting AS (
                SELECT queue, count(*) AS queued,
                       min(greatest(created_at, run_at)) FILTER (WHERE run_at <= now()) AS oldest_due
                FROM task WHERE state = 'queued' GROUP BY queue
            ),
            running AS (
                SELECT queue, count(*) AS running FROM task WHERE state = 'running' GROUP BY queue
            ),
            names AS (
                SELECT queue FROM waiting UNION SELECT queue FROM running UNION SELECT name FROM queue
            )
            SELECT n.queue, coalesce(w.queued, 0) AS queued, coalesce(r.running, 0) AS running,
                   coalesce(extract(epoch FROM now() - w.oldest_due), 0)::float8 AS oldest_age_seconds
            FROM names n LEFT JOIN waiting w USING (queue) LEFT JOIN running r USING (queue)
            """;

    /** Sets the pause flag of a queue, creating its row. */
    static final String SET_PAUSED = """
            INSERT INTO queue (name, paused) VALUES (:queue, :paused)
            ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now()
            """;
}
