package dev.tasklane.events;

/**
 * Every read of the event log ({@code task_event_batch}, V022); run only by {@link EventLog}. A
 * batch row holds the events of one statement for one queue; an event's id is its batch's
 * {@code first_id} plus its position in the batch, from 0. Pages are bounded twice: by a count of
 * events ({@code :limit}) and by bytes ({@code :maxBytes}, the events' detail as stored): a page
 * ends before the event that would take it past the bytes, but always holds at least one.
 * {@code page_rows} is how many events the page had before that cut, so the reader knows whether
 * more may follow. The count limit applies first, in a subquery, so that the window functions see
 * one page, never the whole range.
 */
final class EventSql {

    private EventSql() {
    }

    /** The highest id a batch can give an event: its first id plus this. */
    static final long BATCH_SPAN = 4095;

    /** The columns of one event, from a batch {@code b} and its events unnested as {@code e}. */
    private static final String EVENT_COLUMNS = """
            b.first_id + e.k - 1 AS id, b.first_id AS batch, e.task_id, b.queue, e.task_type, e.name,
            CASE e.name WHEN 'progress' THEN 'running' ELSE e.name END AS state, e.attempt, b.at, e.detail,
            pg_column_size(e.detail) AS detail_bytes, e.concurrency_key, e.schedule, e.scheduled_for""";

    /** A batch's events, one row each with its position {@code k} from 1. */
    private static final String UNNEST = """
            unnest(b.task_ids, b.names, b.attempts, b.task_types, b.concurrency_keys, b.schedules,
                   b.scheduled_fors, b.details, b.previous)
                WITH ORDINALITY AS e(task_id, name, attempt, task_type, concurrency_key, schedule, scheduled_for,
                                     detail, previous, k)""";

    /**
     * The first id of the batch that holds :after, or :after when none does: batches hold ranges of
     * ids that do not overlap, so none before it holds an id past :after.
     */
    private static final String BATCH_OF_AFTER = """
            coalesce((SELECT x.first_id FROM task_event_batch x WHERE x.first_id <= :after
                      ORDER BY x.first_id DESC LIMIT 1), :after)""";

    /** Cuts a page of events {@code p}, ordered by id, to :maxBytes (see the class comment). */
    private static String bytesBounded(String page) {
        return """
                SELECT * FROM (
                    SELECT p.*, count(*) OVER () AS page_rows,
                           sum(coalesce(p.detail_bytes, 0) + 100) OVER (ORDER BY p.id) - coalesce(p.detail_bytes, 0) - 100
                               AS bytes_before
                    FROM (%s) p
                ) page
                WHERE bytes_before = 0 OR bytes_before < :maxBytes
                ORDER BY id
                """.formatted(page);
    }

    /**
     * The highest id that a batch drawn so far can hold, whether its transaction has committed or
     * not. Locks nothing.
     */
    static final String LAST_ASSIGNED = """
            SELECT CASE WHEN is_called THEN last_value + %d ELSE last_value - 1 END AS last_id
            FROM task_event_batch_seq
            """.formatted(BATCH_SPAN);

    /**
     * One round of the horizon: the highest event id that a batch drawn so far can hold (L); the
     * oldest transaction still running (xmin) as of this statement's snapshot; and, only when L is
     * past {@code :lastSeen}, a bound above every transaction id assigned before L was read: the id
     * this statement takes for itself, after the sequence row has been read (the materialized CTE
     * yields that row before the outer projection takes the id). Taking an id costs no WAL flush
     * (the transaction writes nothing else) where listing the running transactions
     * ({@code pg_stat_activity}) copied every backend's status, ~1.7 ms per round; and it is taken
     * only when there is something new to prove, so a quiet log consumes no transaction ids.
     * Before the first batch, L is the last id of the events written before V022. L is
     * {@link #LAST_ASSIGNED}.
     */
    static final String HORIZON = """
            WITH seq AS MATERIALIZED (%s)
            SELECT last_id,
                   pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
                   CASE WHEN last_id > :lastSeen THEN pg_current_xact_id()::text::bigint END AS bound
            FROM seq
            """.formatted(LAST_ASSIGNED.strip());

    /**
     * The first :limit batches that hold events after :after and none past :upTo, in id order,
     * with their sizes, starting at the batch that holds :after (see {@link #RANGE}). Reads no
     * arrays.
     */
    static final String BATCHES_AFTER = """
            SELECT b.first_id, b.size FROM task_event_batch b
            WHERE b.first_id >= %s
              AND b.first_id <= :upTo
            ORDER BY b.first_id
            LIMIT :limit
            """.formatted(BATCH_OF_AFTER);

    /**
     * Events in (:after, :upTo], in id order, a page at a time; only the names in :names when it
     * is not empty. The page is whole batches: it walks the batches from the one that holds :after
     * (or the first after it; batches hold ranges of ids that do not overlap, so none before it
     * holds an id past :after), one primary-key step each, counting the events each contributes,
     * until it has :limit or the range ends; then it unnests only those. So a page costs what its
     * events cost however far the range reaches, and holds up to a batch more than :limit: more
     * may follow exactly when it holds :limit or more. Sorting the events of a range and keeping
     * the first :limit unnested and sorted the whole range, 60 ms for a reader 40,000 events behind.
     */
    static final String RANGE = range("");

    /** Like {@link #RANGE}, for one queue's events only, read from the queue's index (V022). */
    static final String RANGE_OF_QUEUE = range("b.queue = :queue AND ");

    private static String range(String queueCondition) {
        String counted = """
                CASE WHEN cardinality(:names::text[]) = 0
                     THEN greatest(0, least(s.first_id + s.size - 1, :upTo) - greatest(s.first_id - 1, :after))
                     ELSE (SELECT count(*) FROM unnest(s.names) WITH ORDINALITY AS n(name, k)
                           WHERE n.name = ANY(:names::text[])
                             AND s.first_id + n.k - 1 > :after AND s.first_id + n.k - 1 <= :upTo) END""";
        return bytesBounded("""
                WITH RECURSIVE walk (first_id, events) AS (
                    SELECT s.first_id, %1$s
                    FROM (SELECT b.first_id, b.size, b.names FROM task_event_batch b
                          WHERE %3$sb.first_id >= %5$s
                            AND b.first_id <= :upTo
                          ORDER BY b.first_id LIMIT 1) s
                    UNION ALL
                    SELECT s.first_id, w.events + %1$s
                    FROM walk w CROSS JOIN LATERAL (
                        SELECT b.first_id, b.size, b.names FROM task_event_batch b
                        WHERE %3$sb.first_id > w.first_id AND b.first_id <= :upTo
                        ORDER BY b.first_id LIMIT 1) s
                    WHERE w.events < :limit
                )
                SELECT %2$s
                FROM task_event_batch b CROSS JOIN LATERAL %4$s
                WHERE b.first_id = ANY (ARRAY(SELECT first_id FROM walk))
                  AND b.first_id + e.k - 1 > :after AND b.first_id + e.k - 1 <= :upTo
                  AND (cardinality(:names::text[]) = 0 OR e.name = ANY(:names::text[]))""".formatted(
                counted, EVENT_COLUMNS, queueCondition, UNNEST, BATCH_OF_AFTER));
    }

    /**
     * One task's events after :after, in id order, a page at a time: walks the task's chain back
     * from the batch of its last event (task.event_batch), each event naming the batch of the one
     * before, until an event at or before :after. A task's events are few; the walk reads one batch
     * row per event, by its primary key.
     */
    static final String OF_TASK = bytesBounded("""
            WITH RECURSIVE chain AS (
                SELECT %1$s, e.previous
                FROM task t
                JOIN task_event_batch b ON b.first_id = t.event_batch
                CROSS JOIN LATERAL %2$s
                WHERE t.id = :taskId AND e.task_id = :taskId
                UNION ALL
                SELECT %1$s, e.previous
                FROM chain c
                JOIN task_event_batch b ON b.first_id = c.previous
                CROSS JOIN LATERAL %2$s
                WHERE c.id > :after AND e.task_id = :taskId
            )
            SELECT id, batch, task_id, queue, task_type, name, state, attempt, at, detail, detail_bytes,
                   concurrency_key, schedule, scheduled_for
            FROM chain
            WHERE id > :after
            ORDER BY id
            LIMIT :limit""".formatted(EVENT_COLUMNS, UNNEST));

    /** The id of a task's last event, or null. */
    static final String LAST_OF_TASK = """
            SELECT b.first_id + array_position(b.task_ids, t.id) - 1 AS last_id
            FROM task t JOIN task_event_batch b ON b.first_id = t.event_batch
            WHERE t.id = :taskId
            """;

    /** The highest event id retention has deleted; 0 when it has deleted none. */
    static final String PRUNED_THROUGH = "SELECT pruned_through FROM event_retention";
}
