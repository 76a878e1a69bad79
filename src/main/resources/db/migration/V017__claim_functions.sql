-- The claims of queues without flow control (TaskSql.CLAIM_OF_TYPES, which the in-process workers
-- and typed pull claims send, and TaskSql.CLAIM_ANY_TYPE) as functions whose statements keep one
-- generic plan per session. Sent as prepared statements, PostgreSQL planned them anew for every
-- call (the generic plan's estimate of LIMIT $n is a tenth of the queue, so it never preferred
-- that plan): 0.5-0.9 ms of planning against 0.1-0.2 ms of execution for an idle queue's claim,
-- paid by every pickup and every poll of an idle queue. plan_cache_mode is set on the functions,
-- not the session, so it holds behind PgBouncer in transaction mode too. Unlike the statements,
-- the update finds its rows by an array of ids: joined to `next`, a generic plan hashes the whole
-- table for the tenth of the queue it expects. That estimate also prices the plan far above
-- jit_above_cost behind a large backlog, and JIT compiles anew on every call (half a second for a
-- claim of 100 with a million due tasks that runs in 5-7 ms): jit is off in the functions. Tables
-- are not qualified: they resolve in the caller's search_path, as the statements' do.
CREATE FUNCTION tasklane_claim_of_types(p_queue text, p_types text[], p_limit integer, p_worker_id text,
                                        p_lease_id uuid, p_lease_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN QUERY
    WITH RECURSIVE priorities AS (
        (SELECT t.priority FROM task t
         WHERE t.queue = p_queue AND t.state = 'queued'
           AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = p_queue AND (q.paused OR q.flow_controlled))
         ORDER BY t.priority DESC LIMIT 1)
        UNION ALL
        SELECT (SELECT t.priority FROM task t
                WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority < p.priority
                ORDER BY t.priority DESC LIMIT 1)
        FROM priorities p WHERE p.priority IS NOT NULL
    ),
    next AS MATERIALIZED (
        SELECT level.id FROM priorities p CROSS JOIN LATERAL (
            SELECT due.id FROM unnest(p_types) AS wanted(type) CROSS JOIN LATERAL (
                SELECT t.id, t.run_at FROM task t
                WHERE t.queue = p_queue AND t.type = wanted.type AND t.state BETWEEN 'queued' AND 'queued'
                  AND t.priority = p.priority AND t.run_at <= now()
                ORDER BY t.run_at, t.id
                LIMIT p_limit
                FOR UPDATE SKIP LOCKED
            ) due
            ORDER BY due.run_at, due.id
            LIMIT p_limit
        ) level
        WHERE p.priority IS NOT NULL
        LIMIT p_limit
    ),
    changed AS (
        UPDATE task t
        SET state = 'running', worker_id = p_worker_id, lease_id = p_lease_id, attempt = t.attempt + 1,
            started_at = statement_timestamp(),
            timeout_at = statement_timestamp() + t.timeout_seconds * interval '1 second',
            lease_expires_at = least(statement_timestamp() + p_lease_ms * interval '1 millisecond',
                                     statement_timestamp() + t.timeout_seconds * interval '1 second'),
            progress_percent = NULL, progress_message = NULL
        WHERE t.id = ANY (ARRAY(SELECT next.id FROM next))
        RETURNING t.*
    ),
    events AS (
        INSERT INTO task_event (task_id, concurrency_key, schedule, scheduled_for, queue, task_type, name, state, attempt, detail)
        SELECT c.id, nullif(c.concurrency_key, ''), c.schedule, c.scheduled_for, c.queue, c.type, 'running', 'running',
               c.attempt, jsonb_build_object('workerId', c.worker_id)
        FROM changed c
        ORDER BY c.id
    ),
    notified AS (
        SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
    )
    SELECT changed.* FROM changed LEFT JOIN notified ON true
    ORDER BY changed.priority DESC, changed.run_at, changed.id;
END
$$;

CREATE FUNCTION tasklane_claim_any_type(p_queue text, p_limit integer, p_worker_id text, p_lease_id uuid,
                                        p_lease_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN QUERY
    WITH RECURSIVE priorities AS (
        (SELECT t.priority FROM task t
         WHERE t.queue = p_queue AND t.state = 'queued'
           AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = p_queue AND (q.paused OR q.flow_controlled))
         ORDER BY t.priority DESC LIMIT 1)
        UNION ALL
        SELECT (SELECT t.priority FROM task t
                WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority < p.priority
                ORDER BY t.priority DESC LIMIT 1)
        FROM priorities p WHERE p.priority IS NOT NULL
    ),
    next AS MATERIALIZED (
        SELECT due.id FROM priorities p CROSS JOIN LATERAL (
            SELECT t.id FROM task t
            WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority = p.priority AND t.run_at <= now()
            ORDER BY t.run_at, t.id
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ) due
        WHERE p.priority IS NOT NULL
        LIMIT p_limit
    ),
    changed AS (
        UPDATE task t
        SET state = 'running', worker_id = p_worker_id, lease_id = p_lease_id, attempt = t.attempt + 1,
            started_at = statement_timestamp(),
            timeout_at = statement_timestamp() + t.timeout_seconds * interval '1 second',
            lease_expires_at = least(statement_timestamp() + p_lease_ms * interval '1 millisecond',
                                     statement_timestamp() + t.timeout_seconds * interval '1 second'),
            progress_percent = NULL, progress_message = NULL
        WHERE t.id = ANY (ARRAY(SELECT next.id FROM next))
        RETURNING t.*
    ),
    events AS (
        INSERT INTO task_event (task_id, concurrency_key, schedule, scheduled_for, queue, task_type, name, state, attempt, detail)
        SELECT c.id, nullif(c.concurrency_key, ''), c.schedule, c.scheduled_for, c.queue, c.type, 'running', 'running',
               c.attempt, jsonb_build_object('workerId', c.worker_id)
        FROM changed c
        ORDER BY c.id
    ),
    notified AS (
        SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
    )
    SELECT changed.* FROM changed LEFT JOIN notified ON true
    ORDER BY changed.priority DESC, changed.run_at, changed.id;
END
$$;
