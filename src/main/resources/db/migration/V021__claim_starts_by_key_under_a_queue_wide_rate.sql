-- A claim under a queue-wide rate records its starts by each task's concurrency key, as claims
-- by key do, instead of all under ''. The queue-wide rate sums every key's rows, so it counts as
-- before; but when the limits switch to a rate per key, the claims of the window before the
-- switch now count for their own keys, not for the tasks without a key (which they held back
-- for one window while the tasks of the keys that ran went through).

CREATE OR REPLACE FUNCTION tasklane_start_claimed(p_ids bigint[], p_queue text, p_worker_id text, p_lease_id uuid,
                                       p_lease_ms bigint, p_rate_count integer, p_rate_period_ms bigint,
                                       p_started_at timestamptz)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN QUERY
    WITH changed AS (
        UPDATE task t
        SET state = 'running', worker_id = p_worker_id, lease_id = p_lease_id, attempt = t.attempt + 1,
            started_at = p_started_at,
            timeout_at = p_started_at + t.timeout_seconds * interval '1 second',
            lease_expires_at = least(p_started_at + p_lease_ms * interval '1 millisecond',
                                     p_started_at + t.timeout_seconds * interval '1 second'),
            progress_percent = NULL, progress_message = NULL
        WHERE t.id = ANY (p_ids)
        RETURNING t.*
    ),
    events AS (
        INSERT INTO task_event (task_id, concurrency_key, schedule, scheduled_for, queue, task_type, name, state, attempt, detail)
        SELECT c.id, nullif(c.concurrency_key, ''), c.schedule, c.scheduled_for, c.queue, c.type, 'running', 'running',
               c.attempt, jsonb_build_object('workerId', c.worker_id)
        FROM changed c
        ORDER BY c.id
    ),
    starts AS (
        INSERT INTO queue_claim_start (queue, concurrency_key, started_at, tasks)
        SELECT p_queue, concurrency_key, p_started_at, count(*) FROM changed
        WHERE p_rate_count IS NOT NULL
        GROUP BY concurrency_key
    ),
    expired_starts AS (
        DELETE FROM queue_claim_start s
        WHERE p_rate_count IS NOT NULL AND s.queue = p_queue
          AND s.started_at <= p_started_at - p_rate_period_ms * interval '1 millisecond'
    ),
    notified AS (
        SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
    )
    SELECT changed.* FROM changed LEFT JOIN notified ON true
    ORDER BY changed.priority DESC, changed.run_at, changed.id;
END
$$;
