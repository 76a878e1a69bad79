package dev.tasklane.worker;

/** Every statement on the {@code worker} table, run only by {@link WorkerRegistry}. */
final class WorkerSql {

    private WorkerSql() {
    }

    /** Registers a worker or refreshes its row. */
    static final String UPSERT = """
            INSERT INTO worker (id, kind, queues, in_flight)
            VALUES (:id, :kind, :queues::text[], :inFlight)
            ON CONFLICT (id) DO UPDATE
            SET queues = EXCLUDED.queues, in_flight = EXCLUDED.in_flight, last_seen_at = now()
            """;

    /** Adds a queue to a pull worker's row, creating the row (seen now). */
    static final String TOUCH_PULL = """
            INSERT INTO worker (id, kind, queues, in_flight)
            VALUES (:id, 'pull', ARRAY[:queue]::text[],
                    (SELECT count(*) FROM task t WHERE t.id = ANY (ARRAY(SELECT id FROM task_running))
                     AND t.state = 'running' AND t.worker_id = :id))
            ON CONFLICT (id) DO UPDATE
            SET queues = CASE WHEN :queue = ANY(worker.queues) THEN worker.queues
                              ELSE worker.queues || :queue END,
                in_flight = EXCLUDED.in_flight, last_seen_at = now()
            """;

    /** Live workers: replicas and pull workers seen within the last minute. */
    static final String LIST_LIVE = """
            SELECT * FROM worker WHERE last_seen_at > now() - interval '60 seconds' ORDER BY kind DESC, id
            """;

    /** Forgets workers not seen for a minute. */
    static final String DELETE_STALE = "DELETE FROM worker WHERE last_seen_at <= now() - interval '60 seconds'";

    static final String DELETE = "DELETE FROM worker WHERE id = :id";
}
