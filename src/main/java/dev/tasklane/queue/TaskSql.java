package dev.tasklane.queue;

import dev.tasklane.events.NotificationListener;

/**
 * Every statement on the {@code task} table, run only by {@link TaskStore}. A statement that
 * changes a task appends its {@code task_event} row in the same statement, after the task row,
 * so the transaction owns an id before the event takes its sequence number (see V002); all but
 * the enqueue also NOTIFY every replica's event reader, delivered at their commit
 * ({@link #notifiedIfAny}).
 */
final class TaskSql {

    private TaskSql() {
    }

    /** The wire format of timestamps inside event details: UTC, microseconds, like the API's. */
    static final String UTC_MICROS = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'";

    /** The rows of the CTE {@code changed}, once the CTE {@code notified} has run. */
    private static final String CHANGED = "SELECT changed.* FROM changed LEFT JOIN notified ON true";

    /**
     * The CTE {@code notified}: a NOTIFY to the event readers of every replica when the CTE
     * {@code rows} has any, sent by the statement itself so that it arrives at the commit of its
     * events, not after their rows have come back to this replica (tens of milliseconds under
     * load). The statement must join it (see {@link #CHANGED}): a CTE nobody reads does not run.
     */
    private static String notifiedIfAny(String rows) {
        return """
                notified AS (
                    SELECT pg_notify('%s', '') FROM (SELECT 1 FROM %s LIMIT 1) AS any_row
                )""".formatted(NotificationListener.EVENTS_CHANNEL, rows);
    }

    /**
     * Inserts a batch of tasks for one queue and their {@code queued} events; returns the rows it
     * inserted with their position in the batch ({@code ord}, from 1). Rows whose idempotency key
     * already exists on the queue are skipped, not returned. Ids are drawn before the insert so
     * that each returned row can be matched to its request by id, whatever order RETURNING uses.
     * Locks: the inserted rows only (and waits on a concurrent insert of the same key). Unlike
     * the statements below it sends no NOTIFY: a NOTIFY holds a database-wide lock until its
     * transaction has committed, which would queue concurrent enqueues' commits one behind the
     * other; the event log sends one NOTIFY for many enqueues after they return.
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

    /**
     * Retention: deletes up to :limit terminal tasks that finished before :before, oldest first,
     * with their events, and raises the event log's pruned-through mark in the same transaction.
     * SKIP LOCKED leaves rows another replica is pruning (or someone is retrying) alone; finished
     * rows are outside the claim index, so this never stands in a claim's way.
     */
    static final String PRUNE_FINISHED = """
            WITH doomed AS (
                SELECT id FROM task
                WHERE finished_at < :before AND state IN ('succeeded', 'failed', 'cancelled')
                ORDER BY finished_at
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ),
            events AS (
                DELETE FROM task_event e USING doomed d WHERE e.task_id = d.id RETURNING e.id
            ),
            tasks AS (
                DELETE FROM task t USING doomed d WHERE t.id = d.id RETURNING t.id
            ),
            marked AS (
                UPDATE event_retention SET pruned_through = greatest(pruned_through, (SELECT max(id) FROM events))
                WHERE EXISTS (SELECT 1 FROM events)
            )
            SELECT count(*) AS pruned FROM tasks
            """;

    /** The state of one task, to explain why a conditional change did nothing. */
    static final String STATE_OF = "SELECT state FROM task WHERE id = :id";

    /** The detail of a {@code queued} event: when it runs and why it was put back, if it was. */
    private static final String QUEUED_DETAIL =
            "jsonb_build_object('runAt', to_char(run_at AT TIME ZONE 'UTC', " + UTC_MICROS + "), 'error', last_error)";

    /** The detail of the event for a task's new state, from its row. */
    private static final String STATE_DETAIL = """
            CASE state
                WHEN 'queued' THEN %s
                WHEN 'succeeded' THEN jsonb_build_object('result', result)
                WHEN 'failed' THEN jsonb_build_object('error', last_error)
                WHEN 'running' THEN jsonb_build_object('workerId', worker_id)
                ELSE '{}'::jsonb
            END""".formatted(QUEUED_DETAIL);

    /** Appends, for every row of the CTE {@code changed}, the event named after its new state, and NOTIFYs. */
    private static final String STATE_EVENTS = """
            events AS (
                INSERT INTO task_event (task_id, queue, task_type, name, state, attempt, detail)
                SELECT id, queue, type, state, state, attempt, %s
                FROM changed
                ORDER BY id
            ),
            %s""".formatted(STATE_DETAIL, notifiedIfAny("changed"));

    /**
     * Claims up to :limit due tasks of a queue that is not paused, in claim order, for one
     * worker; optionally only some types. The locking subquery is a materialized CTE so that it
     * runs once and never locks more than :limit rows. Locks: the claimed rows; skips rows
     * locked by anyone else. Returns the claimed tasks.
     */
    static final String CLAIM = """
            WITH next AS MATERIALIZED (
                SELECT id FROM task
                WHERE queue = :queue AND state = 'queued' AND run_at <= now()
                  AND (:anyType OR type = ANY(:types::text[]))
                  AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = :queue AND q.paused)
                ORDER BY priority DESC, run_at, id
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ),
            changed AS (
                UPDATE task t
                SET state = 'running', worker_id = :workerId, attempt = t.attempt + 1, started_at = now(),
                    lease_expires_at = now() + :leaseMs * interval '1 millisecond',
                    progress_percent = NULL, progress_message = NULL
                FROM next
                WHERE t.id = next.id
                RETURNING t.*
            ),
            %s
            %s
            """.formatted(STATE_EVENTS, CHANGED);

    /**
     * The CTE {@code locked}: the tasks in {@code :ids}, locked in id order. Statements that
     * change many running tasks of one worker take it first: a replica renews its leases while its
     * outcomes are recorded and (on shutdown) its tasks released, over overlapping rows. Rows
     * locked in two orders deadlock; PostgreSQL then aborts one statement, and a batch of lost
     * outcomes waits for its leases to run out (seen as a 30-second stall in the benchmark).
     */
    private static final String LOCKED_IN_ID_ORDER = """
            locked AS MATERIALIZED (
                SELECT id FROM task WHERE id = ANY(:ids::bigint[]) ORDER BY id FOR UPDATE
            )""";

    /**
     * Records the outcomes of many attempts at once: success, or failure that is retried after
     * :delaysMs unless attempts are exhausted or the failure is permanent. Applies only where the
     * worker still holds that attempt (any attempt for an attempt below zero) and, where asked,
     * where its lease has not expired; returns the tasks it changed. Locks the rows in id order
     * first ({@link #LOCKED_IN_ID_ORDER}).
     */
    static final String COMPLETE_MANY = """
            WITH outcome AS (
                SELECT * FROM unnest(:ids::bigint[], :attempts::integer[], :workerIds::text[], :succeeded::boolean[],
                                     :results::text[], :errors::text[], :retryable::boolean[], :delaysMs::bigint[],
                                     :leaseMustHold::boolean[])
                    AS o(id, attempt, worker_id, succeeded, result, error, retryable, delay_ms, lease_must_hold)
            ),
            %s,
            changed AS (
                UPDATE task t
                SET state = CASE WHEN o.succeeded THEN 'succeeded'
                                 WHEN o.retryable AND t.attempt < t.max_attempts THEN 'queued'
                                 ELSE 'failed' END,
                    result = CASE WHEN o.succeeded THEN o.result::jsonb END,
                    last_error = CASE WHEN o.succeeded THEN t.last_error ELSE o.error END,
                    run_at = CASE WHEN NOT o.succeeded AND o.retryable AND t.attempt < t.max_attempts
                                  THEN now() + o.delay_ms * interval '1 millisecond' ELSE t.run_at END,
                    finished_at = CASE WHEN o.succeeded OR NOT o.retryable OR t.attempt >= t.max_attempts
                                       THEN now() END,
                    worker_id = NULL,
                    lease_expires_at = NULL
                FROM outcome o JOIN locked l ON l.id = o.id
                WHERE t.id = o.id AND t.state = 'running' AND t.worker_id = o.worker_id
                  AND (o.attempt < 0 OR t.attempt = o.attempt)
                  AND (NOT o.lease_must_hold OR t.lease_expires_at > now())
                RETURNING t.*
            ),
            %s
            %s
            """.formatted(LOCKED_IN_ID_ORDER, STATE_EVENTS, CHANGED);

    /**
     * Reports progress of a running attempt held by :workerId; returns the task, or nothing when
     * the worker no longer holds it. Touches no indexed column, so the update stays HOT.
     */
    static final String REPORT_PROGRESS = """
            WITH changed AS (
                UPDATE task
                SET progress_percent = :percent, progress_message = :message
                WHERE id = :id AND state = 'running' AND worker_id = :workerId
                  AND (:attempt < 0 OR attempt = :attempt) AND lease_expires_at > now()
                RETURNING *
            ),
            events AS (
                INSERT INTO task_event (task_id, queue, task_type, name, state, attempt, detail)
                SELECT id, queue, type, 'progress', state, attempt,
                       jsonb_build_object('percent', progress_percent, 'message', progress_message)
                FROM changed
            ),
            %s
            %s
            """.formatted(notifiedIfAny("changed"), CHANGED);

    /** Extends the lease of one running task, only while :workerId holds it; returns the task. */
    static final String HEARTBEAT = """
            UPDATE task
            SET lease_expires_at = now() + :leaseMs * interval '1 millisecond'
            WHERE id = :id AND state = 'running' AND worker_id = :workerId AND lease_expires_at > now()
            RETURNING *
            """;

    /**
     * Extends the leases of the running tasks of one worker that it still holds; returns their
     * ids. A task missing from the answer is no longer this worker's to run. Locks in id order.
     */
    static final String RENEW_LEASES = """
            WITH %s
            UPDATE task t
            SET lease_expires_at = now() + :leaseMs * interval '1 millisecond'
            FROM locked
            WHERE t.id = locked.id AND t.state = 'running' AND t.worker_id = :workerId
            RETURNING t.id
            """.formatted(LOCKED_IN_ID_ORDER);

    /**
     * Puts running tasks of a worker back to queued at once without counting the attempt
     * (a replica shutting down); returns them. Locks in id order.
     */
    static final String RELEASE_MANY = """
            WITH %s,
            changed AS (
                UPDATE task t
                SET state = 'queued', attempt = t.attempt - 1, worker_id = NULL, lease_expires_at = NULL,
                    run_at = now(), last_error = :error
                FROM locked
                WHERE t.id = locked.id AND t.state = 'running' AND t.worker_id = :workerId
                RETURNING t.*
            ),
            %s
            %s
            """.formatted(LOCKED_IN_ID_ORDER, STATE_EVENTS, CHANGED);

    /**
     * Returns up to :limit tasks whose lease has expired to queued (attempt counted), or fails
     * them when their attempts are exhausted. SKIP LOCKED lets any number of replicas run it at
     * once without waiting on, or doing twice, the same rows.
     */
    static final String RESCUE_EXPIRED = """
            WITH expired AS MATERIALIZED (
                SELECT id FROM task
                WHERE state = 'running' AND lease_expires_at < now()
                ORDER BY lease_expires_at
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ),
            changed AS (
                UPDATE task t
                SET state = CASE WHEN t.attempt >= t.max_attempts THEN 'failed' ELSE 'queued' END,
                    finished_at = CASE WHEN t.attempt >= t.max_attempts THEN now() END,
                    run_at = CASE WHEN t.attempt >= t.max_attempts THEN t.run_at ELSE now() END,
                    last_error = 'lease expired', worker_id = NULL, lease_expires_at = NULL
                FROM expired
                WHERE t.id = expired.id
                RETURNING t.*
            ),
            %s
            %s
            """.formatted(STATE_EVENTS, CHANGED);

    /**
     * Cancels a queued or running task; returns it with the worker that was running it, if any.
     */
    static final String CANCEL = """
            WITH before AS (
                SELECT id, worker_id FROM task WHERE id = :id AND state IN ('queued', 'running') FOR UPDATE
            ),
            changed AS (
                UPDATE task t
                SET state = 'cancelled', finished_at = now(), worker_id = NULL, lease_expires_at = NULL
                FROM before
                WHERE t.id = before.id
                RETURNING t.*, before.worker_id AS previous_worker_id
            ),
            %s
            %s
            """.formatted(STATE_EVENTS, CHANGED);

    /** Puts a failed or cancelled task back in the queue, due now, with its attempts reset. */
    static final String RETRY = """
            WITH changed AS (
                UPDATE task
                SET state = 'queued', attempt = 0, run_at = now(), finished_at = NULL, started_at = NULL,
                    result = NULL, last_error = NULL, progress_percent = NULL, progress_message = NULL
                WHERE id = :id AND state IN ('failed', 'cancelled')
                RETURNING *
            ),
            %s
            %s
            """.formatted(STATE_EVENTS, CHANGED);
}
