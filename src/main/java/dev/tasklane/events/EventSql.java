package dev.tasklane.events;

/**
 * Every read of {@code task_event}; run only by {@link EventLog}. Pages are bounded twice: by a
 * count of rows ({@code :limit}) and by bytes ({@code :maxBytes}, the rows' detail as JSON text,
 * which V008 stores with each event): a page ends before the row that would take it past the
 * bytes, but always holds at least one row. {@code page_rows} is how many rows the page had
 * before that cut, so the reader knows whether more may follow. The count limit applies first,
 * in a subquery, so that the window functions see one page, never the whole range.
 */
final class EventSql {

    private EventSql() {
    }

    /**
     * One round of the horizon: the last event id handed out so far (L); the oldest transaction
     * still running (xmin) as of this statement's snapshot; and, only when L is past
     * {@code :lastSeen}, a bound above every transaction id assigned before L was read: the id
     * this statement takes for itself, after the sequence row has been read (the materialized CTE
     * yields that row before the outer projection takes the id). Taking an id costs no WAL flush
     * (the transaction writes nothing else) where listing the running transactions
     * ({@code pg_stat_activity}) copied every backend's status, ~1.7 ms per round; and it is taken
     * only when there is something new to prove, so a quiet log consumes no transaction ids.
     */
    static final String HORIZON = """
            WITH seq AS MATERIALIZED (
                SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS last_id
                FROM task_event_id_seq
            )
            SELECT last_id,
                   pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
                   CASE WHEN last_id > :lastSeen THEN pg_current_xact_id()::text::bigint END AS bound
            FROM seq
            """;

    /** The last event id handed out so far, whether its transaction has committed or not. Locks nothing. */
    static final String LAST_ASSIGNED = """
            SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS last_id
            FROM task_event_id_seq
            """;

    /**
     * Events in (:after, :upTo], in id order, a page at a time; only the names in :names when it
     * is not empty (a filter on the primary key's range).
     */
    static final String RANGE = """
            SELECT * FROM (
                SELECT p.*, count(*) OVER () AS page_rows,
                       sum(coalesce(p.detail_bytes, 0) + 100) OVER (ORDER BY p.id) - coalesce(p.detail_bytes, 0) - 100
                           AS bytes_before
                FROM (SELECT e.* FROM task_event e
                      WHERE e.id > :after AND e.id <= :upTo
                        AND (cardinality(:names::text[]) = 0 OR e.name = ANY(:names::text[]))
                      ORDER BY e.id
                      LIMIT :limit) p
            ) page
            WHERE bytes_before = 0 OR bytes_before < :maxBytes
            ORDER BY id
            """;

    /** Like {@link #RANGE}, for one queue's events only, read from the queue's index (V009). */
    static final String RANGE_OF_QUEUE = """
            SELECT * FROM (
                SELECT p.*, count(*) OVER () AS page_rows,
                       sum(coalesce(p.detail_bytes, 0) + 100) OVER (ORDER BY p.id) - coalesce(p.detail_bytes, 0) - 100
                           AS bytes_before
                FROM (SELECT e.* FROM task_event e
                      WHERE e.queue = :queue AND e.id > :after AND e.id <= :upTo
                        AND (cardinality(:names::text[]) = 0 OR e.name = ANY(:names::text[]))
                      ORDER BY e.id
                      LIMIT :limit) p
            ) page
            WHERE bytes_before = 0 OR bytes_before < :maxBytes
            ORDER BY id
            """;

    /** One task's events after :after, in id order, a page at a time. */
    static final String OF_TASK = """
            SELECT * FROM (
                SELECT p.*, count(*) OVER () AS page_rows,
                       sum(coalesce(p.detail_bytes, 0) + 100) OVER (ORDER BY p.id) - coalesce(p.detail_bytes, 0) - 100
                           AS bytes_before
                FROM (SELECT e.* FROM task_event e
                      WHERE e.task_id = :taskId AND e.id > :after
                      ORDER BY e.id
                      LIMIT :limit) p
            ) page
            WHERE bytes_before = 0 OR bytes_before < :maxBytes
            ORDER BY id
            """;

    /** The id of a task's last event, or null. */
    static final String LAST_OF_TASK = "SELECT max(id) AS last_id FROM task_event WHERE task_id = :taskId";

    /** The highest event id retention has deleted; 0 when it has deleted none. */
    static final String PRUNED_THROUGH = "SELECT pruned_through FROM event_retention";
}
