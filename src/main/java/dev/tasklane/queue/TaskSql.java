package dev.tasklane.queue;

/**
 * Every statement on the {@code task} table, run only by {@link TaskStore}. A statement that
 * changes a task appends its {@code task_event} row in the same statement, after the task row,
 * so the transaction owns an id before the event takes its sequence number (see V002).
 */
final class TaskSql {

    private TaskSql() {
    }

    /** The wire format of timestamps inside event details: UTC, microseconds, like the API's. */
    static final String UTC_MICROS = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'";

    /**
     * Inserts a batch of tasks for one queue and their {@code queued} events; returns the rows it
     * inserted with their position in the batch ({@code ord}, from 1). Rows whose idempotency key
     * already exists on the queue are skipped, not returned. Ids are drawn before the insert so
     * that each returned row can be matched to its request by id, whatever order RETURNING uses.
     * Locks: the inserted rows only (and waits on a concurrent insert of the same key).
     */
    static final String ENQUEUE_MANY = """
            WITH input AS MATERIALIZED (
                SELECT nextval(pg_get_serial_sequence('task', 'id')) AS id, i.*
                FROM unnest(:types::text[], :payloads::text[], :priorities::smallint[], :runAts::text[],
                            :delaysMs::bigint[], :maxAttempts::integer[], :keys::text[]) WITH ORDINALITY
                     AS i(type, payload, priority, run_at, delay_ms, max_attempts, idempotency_key, ord)
            ),
            inserted AS (
                INSERT INTO task (id, queue, type, payload, priority, run_at, max_attempts, idempotency_key)
                OVERRIDING SYSTEM VALUE
                SELECT id, :queue, type, payload::jsonb, priority,
                       coalesce(run_at::timestamptz, now() + delay_ms * interval '1 millisecond'),
                       max_attempts, idempotency_key
                FROM input
                ORDER BY ord
                ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING *
            ),
            events AS (
                INSERT INTO task_event (task_id, queue, task_type, name, state, attempt, detail)
                SELECT id, queue, type, 'queued', 'queued', attempt,
                       jsonb_build_object('runAt', to_char(run_at AT TIME ZONE 'UTC', %s), 'error', null)
                FROM inserted
                ORDER BY id
            )
            SELECT input.ord, inserted.*
            FROM inserted JOIN input USING (id)
            """.formatted(UTC_MICROS);

    /** The existing tasks that hold some idempotency keys of a queue. Locks nothing. */
    static final String FIND_BY_KEYS = """
            SELECT * FROM task WHERE queue = :queue AND idempotency_key = ANY(:keys::text[])
            """;

    /** One task by id. Locks nothing. */
    static final String FIND_BY_ID = "SELECT * FROM task WHERE id = :id";

    /** Newest first; the filter conditions are appended as {@code AND ...} in {@link TaskStore}. */
    static final String LIST_PREFIX = "SELECT * FROM task WHERE true";

    static final String LIST_SUFFIX = " ORDER BY id DESC LIMIT :limit";

    /**
     * Deletes a terminal task and its events; returns its id, or nothing when the task is missing
     * or not terminal. Locks the task row.
     */
    static final String DELETE_TERMINAL = """
            WITH deleted AS (
                DELETE FROM task
                WHERE id = :id AND state IN ('succeeded', 'failed', 'cancelled')
                RETURNING id
            ),
            events AS (
                DELETE FROM task_event e USING deleted d WHERE e.task_id = d.id
            )
            SELECT id FROM deleted
            """;

    /** The state of one task, to explain why a conditional change did nothing. */
    static final String STATE_OF = "SELECT state FROM task WHERE id = :id";
}
