package dev.tasklane.events;

/** Every read of {@code task_event}; run only by {@link EventLog}. */
final class EventSql {

    private EventSql() {
    }

    /**
     * One round of the horizon: the last event id handed out so far; the oldest transaction
     * still running (xmin) and the snapshot's xmax as of this statement's snapshot; and the ids of
     * every transaction running now, from the process array. The snapshot's xmax alone is not
     * enough: it is the latest completed id plus one, and a transaction that got its id after that
     * one runs unseen above it. The snapshot is taken when the statement starts and the sequence
     * is read after that, so the id read here pairs with a later round's bound (see {@link EventLog}).
     */
    static final String HORIZON = """
            SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END AS last_id,
                   pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin,
                   pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax,
                   (SELECT array_agg(backend_xid::text::bigint) FROM pg_stat_activity
                    WHERE backend_xid IS NOT NULL) AS running
            FROM task_event_id_seq s
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
