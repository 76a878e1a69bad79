-- Every claim but a claim by concurrency key goes through the claim functions, flow-controlled
-- ones too: V017's functions refused a queue with flow control, whose claims ran the same logic as
-- inline statements (planned anew for each claim) under the queue's row lock. These take
-- p_under_lock, true only when the caller holds that lock in an earlier statement of its
-- transaction (where it also cut p_limit to what the limits leave), and the queue's rate
-- (p_rate_count claims per p_rate_period_ms, both null when there is none): the claim then records
-- what it started, for the rate, and forgets starts older than the period. Each claim function
-- picks and locks its tasks in one statement and starts them in tasklane_start_claimed, which
-- both share. Everything else is as in V017, whose notes hold here too. V017's signatures stay,
-- as calls of these, for replicas of the previous version that run beside these during a rolling
-- update.

-- Starts the picked tasks, already locked by the caller's statement: runs them for the worker
-- under the lease, writes their `running` events, counts them for the rate and wakes the event
-- readers; returns them in claim order (an UPDATE's RETURNING keeps no order of its own).
CREATE FUNCTION tasklane_start_claimed(p_ids bigint[], p_queue text, p_worker_id text, p_lease_id uuid,
                                       p_lease_ms bigint, p_rate_count integer, p_rate_period_ms bigint)
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
            started_at = statement_timestamp(),
            timeout_at = statement_timestamp() + t.timeout_seconds * interval '1 second',
            lease_expires_at = least(statement_timestamp() + p_lease_ms * interval '1 millisecond',
                                     statement_timestamp() + t.timeout_seconds * interval '1 second'),
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
        SELECT p_queue, '', statement_timestamp(), count(*) FROM changed
        HAVING count(*) > 0 AND p_rate_count IS NOT NULL
    ),
    expired_starts AS (
        DELETE FROM queue_claim_start s
        WHERE p_rate_count IS NOT NULL AND s.queue = p_queue
          AND s.started_at <= statement_timestamp() - p_rate_period_ms * interval '1 millisecond'
    ),
    notified AS (
        SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
    )
    SELECT changed.* FROM changed LEFT JOIN notified ON true
    ORDER BY changed.priority DESC, changed.run_at, changed.id;
END
$$;

CREATE FUNCTION tasklane_claim_of_types(p_queue text, p_types text[], p_limit integer, p_worker_id text,
                                        p_lease_id uuid, p_lease_ms bigint, p_under_lock boolean,
                                        p_rate_count integer, p_rate_period_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
DECLARE
    picked bigint[];
BEGIN
    picked := ARRAY(
        WITH RECURSIVE priorities AS (
            (SELECT t.priority FROM task t
             WHERE t.queue = p_queue AND t.state = 'queued'
               AND NOT EXISTS (SELECT 1 FROM queue q
                               WHERE q.name = p_queue AND (q.paused OR (q.flow_controlled AND NOT p_under_lock)))
             ORDER BY t.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT t.priority FROM task t
                    WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority < p.priority
                    ORDER BY t.priority DESC LIMIT 1)
            FROM priorities p WHERE p.priority IS NOT NULL
        )
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
        LIMIT p_limit);
    IF cardinality(picked) > 0 THEN
        RETURN QUERY SELECT * FROM tasklane_start_claimed(picked, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                                          p_rate_count, p_rate_period_ms);
    END IF;
END
$$;

CREATE FUNCTION tasklane_claim_any_type(p_queue text, p_limit integer, p_worker_id text, p_lease_id uuid,
                                        p_lease_ms bigint, p_under_lock boolean, p_rate_count integer,
                                        p_rate_period_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
DECLARE
    picked bigint[];
BEGIN
    picked := ARRAY(
        WITH RECURSIVE priorities AS (
            (SELECT t.priority FROM task t
             WHERE t.queue = p_queue AND t.state = 'queued'
               AND NOT EXISTS (SELECT 1 FROM queue q
                               WHERE q.name = p_queue AND (q.paused OR (q.flow_controlled AND NOT p_under_lock)))
             ORDER BY t.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT t.priority FROM task t
                    WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority < p.priority
                    ORDER BY t.priority DESC LIMIT 1)
            FROM priorities p WHERE p.priority IS NOT NULL
        )
        SELECT due.id FROM priorities p CROSS JOIN LATERAL (
            SELECT t.id FROM task t
            WHERE t.queue = p_queue AND t.state = 'queued' AND t.priority = p.priority AND t.run_at <= now()
            ORDER BY t.run_at, t.id
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ) due
        WHERE p.priority IS NOT NULL
        LIMIT p_limit);
    IF cardinality(picked) > 0 THEN
        RETURN QUERY SELECT * FROM tasklane_start_claimed(picked, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                                          p_rate_count, p_rate_period_ms);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION tasklane_claim_of_types(p_queue text, p_types text[], p_limit integer, p_worker_id text,
                                                   p_lease_id uuid, p_lease_ms bigint)
    RETURNS SETOF task
    LANGUAGE sql
AS $$
    SELECT * FROM tasklane_claim_of_types(p_queue, p_types, p_limit, p_worker_id, p_lease_id, p_lease_ms,
                                          false, NULL::integer, NULL::bigint)
$$;

CREATE OR REPLACE FUNCTION tasklane_claim_any_type(p_queue text, p_limit integer, p_worker_id text, p_lease_id uuid,
                                                   p_lease_ms bigint)
    RETURNS SETOF task
    LANGUAGE sql
AS $$
    SELECT * FROM tasklane_claim_any_type(p_queue, p_limit, p_worker_id, p_lease_id, p_lease_ms,
                                          false, NULL::integer, NULL::bigint)
$$;
