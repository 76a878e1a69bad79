-- A claim on a queue with flow control in one call instead of a transaction of three statements
-- (lock the queue's row, count its budget, claim): each round trip of that transaction came on top
-- of the claim itself, and on a busy queue the claims follow each other, so they set its pace.
--
-- Inside the function every statement takes a snapshot of its own (READ COMMITTED, a volatile
-- function), so the budget, counted after the lock is held, sees every claim that held it before,
-- as the separate statement did. The claim's start, for the tasks' startedAt and for the rate, is
-- the moment the lock was taken (clock_timestamp() then), not the call's start (statement_timestamp()),
-- so that start times still rise in the order the claims held the lock however long one waited
-- for it: startedAt keeps showing the rate as the limit counted it. For that V018's claim
-- functions are split here into picking (tasklane_pick_*) and starting at a given time; their
-- signatures stay, for replicas of the previous version during a rolling update.
--
-- Queues whose limits go by concurrency key (per-key limits, round-robin turns) keep the
-- transaction of statements, whose key walk lives in the service. The caller picks the path from
-- the limits it last read; when the row, read under its lock, says by key after all (the limits
-- changed an instant ago), this function refuses with SQLSTATE TLKEY and claims nothing, and the
-- caller takes the other path. A paused queue answers nothing.

CREATE FUNCTION tasklane_start_claimed(p_ids bigint[], p_queue text, p_worker_id text, p_lease_id uuid,
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
        SELECT p_queue, '', p_started_at, count(*) FROM changed
        HAVING count(*) > 0 AND p_rate_count IS NOT NULL
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

CREATE OR REPLACE FUNCTION tasklane_start_claimed(p_ids bigint[], p_queue text, p_worker_id text, p_lease_id uuid,
                                                  p_lease_ms bigint, p_rate_count integer, p_rate_period_ms bigint)
    RETURNS SETOF task
    LANGUAGE sql
AS $$
    SELECT * FROM tasklane_start_claimed(p_ids, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                         p_rate_count, p_rate_period_ms, statement_timestamp())
$$;

-- Picks and locks up to p_limit due tasks of p_types in claim order; see V017 and V018.
CREATE FUNCTION tasklane_pick_of_types(p_queue text, p_types text[], p_limit integer, p_under_lock boolean)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN ARRAY(
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
END
$$;

-- Picks and locks up to p_limit due tasks of any type in claim order; see V017 and V018.
CREATE FUNCTION tasklane_pick_any_type(p_queue text, p_limit integer, p_under_lock boolean)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN ARRAY(
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
END
$$;

CREATE OR REPLACE FUNCTION tasklane_claim_of_types(p_queue text, p_types text[], p_limit integer, p_worker_id text,
                                                   p_lease_id uuid, p_lease_ms bigint, p_under_lock boolean,
                                                   p_rate_count integer, p_rate_period_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
DECLARE
    picked bigint[] := tasklane_pick_of_types(p_queue, p_types, p_limit, p_under_lock);
BEGIN
    IF cardinality(picked) > 0 THEN
        RETURN QUERY SELECT * FROM tasklane_start_claimed(picked, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                                          p_rate_count, p_rate_period_ms, statement_timestamp());
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION tasklane_claim_any_type(p_queue text, p_limit integer, p_worker_id text, p_lease_id uuid,
                                                   p_lease_ms bigint, p_under_lock boolean, p_rate_count integer,
                                                   p_rate_period_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
DECLARE
    picked bigint[] := tasklane_pick_any_type(p_queue, p_limit, p_under_lock);
BEGIN
    IF cardinality(picked) > 0 THEN
        RETURN QUERY SELECT * FROM tasklane_start_claimed(picked, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                                          p_rate_count, p_rate_period_ms, statement_timestamp());
    END IF;
END
$$;

CREATE FUNCTION tasklane_claim_under_flow(p_queue text, p_types text[], p_limit integer, p_worker_id text,
                                          p_lease_id uuid, p_lease_ms bigint)
    RETURNS SETOF task
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
DECLARE
    q record;
    locked_at timestamptz;
    budget integer;
    picked bigint[];
BEGIN
    SELECT max_running, max_running_per_key, rate_count, rate_period_seconds, rate_per_key_count, fairness, paused
    INTO q FROM queue WHERE name = p_queue FOR UPDATE;
    IF FOUND AND q.paused THEN
        RETURN;
    END IF;
    IF FOUND AND (q.max_running_per_key IS NOT NULL OR q.rate_per_key_count IS NOT NULL OR q.fairness <> 'fifo') THEN
        RAISE EXCEPTION 'queue % has limits by concurrency key', p_queue USING ERRCODE = 'TLKEY';
    END IF;
    locked_at := clock_timestamp();
    budget := greatest(0, least(p_limit,
        q.max_running - (SELECT count(*) FROM task WHERE queue = p_queue AND state = 'running'),
        q.rate_count - (SELECT coalesce(sum(s.tasks), 0) FROM queue_claim_start s
                        WHERE s.queue = p_queue
                          AND s.started_at > locked_at - q.rate_period_seconds * interval '1 second')));
    IF budget = 0 THEN
        RETURN;
    END IF;
    picked := CASE WHEN p_types IS NULL THEN tasklane_pick_any_type(p_queue, budget, true)
                   ELSE tasklane_pick_of_types(p_queue, p_types, budget, true) END;
    IF cardinality(picked) > 0 THEN
        RETURN QUERY SELECT * FROM tasklane_start_claimed(picked, p_queue, p_worker_id, p_lease_id, p_lease_ms,
                                                          q.rate_count, q.rate_period_seconds * 1000::bigint, locked_at);
    END IF;
END
$$;
