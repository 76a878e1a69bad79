package dev.tasklane.queue;

/** Every statement on the {@code queue} table (and the per-queue counts), run by {@link QueueStore}. */
final class QueueSql {

    private QueueSql() {
    }

    /**
     * Per queue: counts by state, when the longest-waiting due task became available, the pause
     * flag and the flow control, for every queue that has tasks or a row in {@code queue}. :queue limits it to
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
                   coalesce(q.paused, false) AS paused,
                   q.max_running, q.max_running_per_key, q.rate_count, q.rate_period_seconds, q.rate_per_key_count,
                   q.rate_per_key_period_seconds, coalesce(q.fairness, 'fifo') AS fairness
            FROM counts c
            FULL JOIN (SELECT * FROM queue WHERE CAST(:queue AS text) IS NULL OR name = :queue) q ON q.name = c.queue
            ORDER BY 1
            """;

    /**
     * The depth metrics: per queue, how many tasks wait and run, and how long the longest-waiting
     * due task has waited; paused queues too. It reads the ready and running rows (V023), never
     * the task table: the counts come from their indexes (an index-only scan once vacuum has marked
     * the pages all-visible; before that the planner may rightly scan the table), and the oldest
     * due task is found as a claim finds the next one, walking the claim index from one queue to
     * the next and from one priority to the next (a seek each) and reading only the rows due now.
     * Behind a large backlog of delayed tasks it reads no row of them: reading every waiting row,
     * as it once did, took 260 ms of a core per million delayed tasks, every interval, on every
     * replica, and the pickups of that moment waited for the core.
     */
    static final String DEPTH = """
            WITH RECURSIVE queues AS (
                (SELECT queue FROM task_ready WHERE priority BETWEEN -100 AND 100 ORDER BY queue LIMIT 1)
                UNION ALL
                SELECT (SELECT r.queue FROM task_ready r
                        WHERE r.queue > q.queue AND r.priority BETWEEN -100 AND 100 ORDER BY r.queue LIMIT 1)
                FROM queues q WHERE q.queue IS NOT NULL
            ),
            priorities AS (
                SELECT q.queue, (SELECT r.priority FROM task_ready r
                                 WHERE r.queue = q.queue AND r.priority BETWEEN -100 AND 100
                                 ORDER BY r.priority DESC LIMIT 1) AS priority
                FROM queues q WHERE q.queue IS NOT NULL
                UNION ALL
                SELECT p.queue, (SELECT r.priority FROM task_ready r
                                 WHERE r.queue = p.queue AND r.priority BETWEEN -100 AND 100 AND r.priority < p.priority
                                 ORDER BY r.priority DESC LIMIT 1)
                FROM priorities p WHERE p.priority IS NOT NULL
            ),
            due AS (
                SELECT p.queue, min(d.available) AS oldest_due
                FROM priorities p CROSS JOIN LATERAL (
                    SELECT min(greatest(r.created_at, r.run_at)) AS available FROM task_ready r
                    WHERE r.queue = p.queue AND r.priority BETWEEN -100 AND 100 AND r.priority = p.priority
                      AND r.run_at <= now()
                ) d
                WHERE p.priority IS NOT NULL
                GROUP BY p.queue
            ),
            waiting AS (
                SELECT queue, count(*) AS queued FROM task_ready WHERE priority BETWEEN -100 AND 100 GROUP BY queue
            ),
            running AS (
                SELECT queue, count(*) AS running FROM task_running GROUP BY queue
            ),
            names AS (
                SELECT queue FROM waiting UNION SELECT queue FROM running UNION SELECT name FROM queue
            )
            SELECT n.queue, coalesce(w.queued, 0) AS queued, coalesce(r.running, 0) AS running,
                   coalesce(extract(epoch FROM now() - d.oldest_due), 0)::float8 AS oldest_age_seconds
            FROM names n LEFT JOIN waiting w USING (queue) LEFT JOIN due d USING (queue)
                 LEFT JOIN running r USING (queue)
            """;

    /**
     * How the depth read plans, for the rest of its transaction: without parallel workers, so
     * that it takes one core of the database; without JIT compilation, since the planner prices
     * its index walks at hundreds of millions (it cannot tell how few seeks they take) and
     * compiling them took 0.7 s, longer than the read; and from the partial indexes rather than
     * the table, with the pages priced as the cached pages they are (a read every few seconds
     * keeps them so): where nearly every row waits, the planner otherwise preferred reading the
     * table, though the index-only count took half the time (0.16 s against 0.32 s per million).
     */
    static final String DEPTH_PLANNING = """
            SELECT set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true),
                   set_config('enable_seqscan', 'off', true), set_config('random_page_cost', '1.1', true)
            """;

    /** Sets the pause flag of a queue, creating its row. */
    static final String SET_PAUSED = """
            INSERT INTO queue (name, paused) VALUES (:queue, :paused)
            ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = now()
            """;

    /** The flow control of every queue that has some (see V011). */
    static final String FLOWS = """
            SELECT name, max_running, max_running_per_key, rate_count, rate_period_seconds, rate_per_key_count,
                   rate_per_key_period_seconds, fairness
            FROM queue WHERE flow_controlled
            """;

    /** One queue's flow control and pause flag, or nothing when it has no row. */
    static final String FLOW_OF = """
            SELECT name, max_running, max_running_per_key, rate_count, rate_period_seconds, rate_per_key_count,
                   rate_per_key_period_seconds, fairness, paused, last_key
            FROM queue WHERE name = :queue
            """;

    /**
     * The first statement of a claim on a flow-controlled queue: takes the queue's row lock, which
     * every such claim takes, and reads the settings as they are now (a row locked after waiting is
     * read in its latest version). The claim itself is the next statement of the transaction, so
     * that its snapshot, taken once the lock is held, counts every claim that held it before.
     */
    static final String LOCK_FOR_CLAIM = FLOW_OF.strip() + " FOR UPDATE";

    /**
     * Applies a merge patch of flow control to a queue, creating its row: each setting whose
     * {@code set...} flag is true takes the given value (null clears it), the others stay. Merged
     * here, in one statement, so that two patches of different settings cannot undo each other.
     */
    static final String PATCH_FLOW = """
            INSERT INTO queue AS q (name, max_running, max_running_per_key, rate_count, rate_period_seconds,
                                    rate_per_key_count, rate_per_key_period_seconds, fairness)
            VALUES (:queue, :maxRunning, :maxRunningPerKey, :rateCount, :ratePeriodSeconds, :ratePerKeyCount,
                    :ratePerKeyPeriodSeconds, coalesce(:fairness, 'fifo'))
            ON CONFLICT (name) DO UPDATE SET
                max_running = CASE WHEN :setMaxRunning THEN EXCLUDED.max_running ELSE q.max_running END,
                max_running_per_key = CASE WHEN :setMaxRunningPerKey THEN EXCLUDED.max_running_per_key
                                           ELSE q.max_running_per_key END,
                rate_count = CASE WHEN :setRate THEN EXCLUDED.rate_count ELSE q.rate_count END,
                rate_period_seconds = CASE WHEN :setRate THEN EXCLUDED.rate_period_seconds ELSE q.rate_period_seconds END,
                rate_per_key_count = CASE WHEN :setRatePerKey THEN EXCLUDED.rate_per_key_count
                                          ELSE q.rate_per_key_count END,
                rate_per_key_period_seconds = CASE WHEN :setRatePerKey THEN EXCLUDED.rate_per_key_period_seconds
                                                   ELSE q.rate_per_key_period_seconds END,
                fairness = CASE WHEN :setFairness THEN EXCLUDED.fairness ELSE q.fairness END,
                updated_at = now()
            """;

    /**
     * Per flow-controlled queue (:queue limits it to one, or is null for all): how many due tasks
     * each kind of limit holds back now. {@code max_running}: the due tasks beyond the queue's free
     * slots; {@code max_running_per_key}: summed over keys, the due tasks beyond each key's free
     * slots; {@code rate}: the due tasks beyond what the queue's rate, or summed over keys each
     * key's rate, lets start now, whichever is more. Reads the queue's waiting and running rows.
     */
    static final String HELD_BACK = """
            SELECT q.name,
                   CASE WHEN q.max_running IS NULL THEN 0
                        ELSE greatest(0, k.due - greatest(0, q.max_running - k.running)) END AS max_running,
                   CASE WHEN q.max_running_per_key IS NULL THEN 0 ELSE k.held_per_key END AS max_running_per_key,
                   greatest(CASE WHEN q.rate_count IS NULL THEN 0
                                 ELSE greatest(0, k.due - greatest(0, q.rate_count - coalesce(
                                     (SELECT sum(s.tasks) FROM queue_claim_start s
                                      WHERE s.queue = q.name
                                        AND s.started_at > now() - q.rate_period_seconds * interval '1 second'), 0)))
                            END,
                            CASE WHEN q.rate_per_key_count IS NULL THEN 0 ELSE k.held_per_key_rate END) AS rate
            FROM queue q CROSS JOIN LATERAL (
                SELECT coalesce(sum(per_key.due), 0)::bigint AS due, coalesce(sum(per_key.running), 0)::bigint AS running,
                       coalesce(sum(greatest(0, per_key.due - greatest(0, q.max_running_per_key - per_key.running))), 0)::bigint
                           AS held_per_key,
                       coalesce(sum(greatest(0, per_key.due - greatest(0, q.rate_per_key_count - coalesce(
                           (SELECT sum(s.tasks) FROM queue_claim_start s
                            WHERE s.queue = q.name AND s.concurrency_key = per_key.concurrency_key
                              AND s.started_at > now() - q.rate_per_key_period_seconds * interval '1 second'), 0)))), 0)::bigint
                           AS held_per_key_rate
                FROM (SELECT concurrency_key, coalesce(w.due, 0) AS due, coalesce(r.running, 0) AS running
                      FROM (SELECT concurrency_key, count(*) AS due FROM task_ready
                            WHERE queue = q.name AND run_at <= now() GROUP BY concurrency_key) w
                      FULL JOIN (SELECT concurrency_key, count(*) AS running FROM task_running
                                 WHERE queue = q.name GROUP BY concurrency_key) r USING (concurrency_key)) per_key
            ) k
            WHERE q.flow_controlled AND (CAST(:queue AS text) IS NULL OR q.name = :queue)
            """;

    /**
     * Retention of rate bookkeeping: deletes up to :limit rows of {@code queue_claim_start} that
     * no window of their queue can see any more (all of a queue's rows once it has no rate), so
     * that a queue whose rate was removed leaves nothing behind. Each rate-limited claim prunes its
     * own queue's rows as well; this catches the rest. Locks the rows it deletes.
     */
    static final String PRUNE_CLAIM_STARTS = """
            DELETE FROM queue_claim_start
            WHERE ctid IN (
                SELECT s.ctid FROM queue_claim_start s LEFT JOIN queue q ON q.name = s.queue
                WHERE s.started_at < now() - coalesce(greatest(q.rate_period_seconds, q.rate_per_key_period_seconds), 0)
                                             * interval '1 second'
                LIMIT :limit
            )
            """;
}
