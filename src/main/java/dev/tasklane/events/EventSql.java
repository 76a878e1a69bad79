package dev.tasklane.events;

/** Every read of {@code task_event}; run only by {@link EventLog}. */
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

    /** Events in (:after, :upTo], in id order, a page at a time. */
    static final String RANGE = """
            SELECT * FROM task_event WHERE id > :after AND id <= :upTo ORDER BY id LIMIT :limit
            """;

    /** One task's events after :after, in id order, a page at a time. */
    static final String OF_TASK = """
            SELECT * FROM task_event WHERE task_id = :taskId AND id > :after ORDER BY id LIMIT :limit
            """;

    /** The id of a task's last event, or null. */
    static final String LAST_OF_TASK = "SELECT max(id) AS last_id FROM task_event WHERE task_id = :taskId";

    /** The highest event id retention has deleted; 0 when it has deleted none. */
    static final String PRUNED_THROUGH = "SELECT pruned_through FROM event_retention";
}
