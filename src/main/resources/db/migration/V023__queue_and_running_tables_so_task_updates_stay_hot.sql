-- Waiting and running tasks get narrow tables of their own, so that the task row is indexed only on
-- what never changes after the enqueue and every later update of it is HOT.
--
-- Until now a claim and an outcome each rewrote the task row with a new entry in every index of
-- the table (four or more per update): state, lease and finish time sat in indexes or in their
-- predicates, and an update that changes an indexed column cannot be HOT. Now:
--   task_ready   one row per queued task (ready row exists exactly while task.state = 'queued'):
--                the claim indexes live here, and a claim deletes the rows it takes;
--   task_running one row per running task (exactly while task.state = 'running'): the running
--                counts of flow control, the rescuer's and a released claim's way to running tasks;
--   task         keeps every column, state included, and stays the truth that lists, counts and the
--                task JSON read; its indexes are the primary key, the queue's, and the partial ones
--                on keys set at the enqueue (idempotency, unique, schedule).
-- Every statement that moves a task into or out of 'queued' or 'running' writes the narrow row in
-- the same statement. Lock order: a claim locks ready rows (SKIP LOCKED), then their task rows
-- (SKIP LOCKED): it never waits, so a statement that holds a task row and then writes its ready row
-- (cancel, debounce) cannot deadlock with it.
--
-- Finished tasks lose their finish-time index: retention finds them through the event batches
-- that hold their events, oldest first, which it walks anyway (see TaskSql.PRUNE_OLD).
--
-- Replicas of the previous release claim from task's own indexes, which this migration drops, and
-- would not write the narrow rows: it refuses to run while any is connected.

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'tasklane-listener'
                 AND pid <> pg_backend_pid()) THEN
        RAISE EXCEPTION 'tasklane replicas of an earlier release are connected to this database'
            USING DETAIL = 'This release keeps waiting and running tasks in tables that earlier replicas do not write.',
                  HINT = 'Stop every replica of the earlier release (scale it to zero), then start this one.';
    END IF;
END
$$;

LOCK TABLE task IN ACCESS EXCLUSIVE MODE;

CREATE TABLE task_ready (
    id              bigint      PRIMARY KEY,
    queue           text        NOT NULL,
    type            text        NOT NULL,
    priority        smallint    NOT NULL,
    run_at          timestamptz NOT NULL,
    concurrency_key text        NOT NULL,
    -- the depth metrics' age of the longest-waiting due task
    created_at      timestamptz NOT NULL,
    -- a debounced enqueue's way to its key's waiting task
    debounce_key    text
) WITH (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);

-- The primary key is the one index: it serves the counts by queue and key and finds a row by its
-- task (and gives logical replication the identity it needs to carry deletes).
CREATE TABLE task_running (
    id              bigint NOT NULL,
    queue           text   NOT NULL,
    concurrency_key text   NOT NULL,
    PRIMARY KEY (queue, concurrency_key, id)
) WITH (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);

INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key)
SELECT id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key FROM task WHERE state = 'queued';

INSERT INTO task_running (id, queue, concurrency_key)
SELECT id, queue, concurrency_key FROM task WHERE state = 'running';

-- Claim order within a queue; by type; by concurrency key (flow control by key). The claim index's
-- predicate (always true: task.priority has that range) is one that only the statements meant for
-- it repeat, so that a claim of some types cannot be planned over it: where the statistics say one
-- type fills the table, the planner read every waiting row of the queue for each wanted type that
-- had none (as task_claim_of_types_idx did for V010).
CREATE INDEX task_ready_claim_idx ON task_ready (queue, priority DESC, run_at, id) WHERE priority BETWEEN -100 AND 100;
CREATE INDEX task_ready_type_idx ON task_ready (queue, type, priority DESC, run_at, id);
CREATE INDEX task_ready_key_idx ON task_ready (queue, concurrency_key, priority DESC, run_at, id);
CREATE INDEX task_ready_debounce_idx ON task_ready (queue, debounce_key, id) WHERE debounce_key IS NOT NULL;

ANALYZE task_ready, task_running;

DROP INDEX task_claim_idx;
DROP INDEX task_claim_of_types_idx;
DROP INDEX task_claim_key_idx;
DROP INDEX task_running_key_idx;
DROP INDEX task_state_id_idx;
DROP INDEX task_finished_at_idx;
DROP INDEX task_debounce_waiting_idx;

-- Room on each page for the claim's and the outcome's new versions of the rows it holds.
ALTER TABLE task SET (fillfactor = 30);

-- Picks and locks up to p_limit due tasks of p_types in claim order: ready rows first, then their
-- task rows, both SKIP LOCKED; answers the ids whose both rows it holds, and those of ready rows
-- whose task is gone (something left them behind), which the claim's start deletes.
CREATE OR REPLACE FUNCTION tasklane_pick_of_types(p_queue text, p_types text[], p_limit integer, p_under_lock boolean)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN ARRAY(
        WITH RECURSIVE priorities AS (
            (SELECT r.priority FROM task_ready r
             WHERE r.queue = p_queue AND r.priority BETWEEN -100 AND 100
               AND NOT EXISTS (SELECT 1 FROM queue q
                               WHERE q.name = p_queue AND (q.paused OR (q.flow_controlled AND NOT p_under_lock)))
             ORDER BY r.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT r.priority FROM task_ready r
                    WHERE r.queue = p_queue AND r.priority BETWEEN -100 AND 100 AND r.priority < p.priority
                    ORDER BY r.priority DESC LIMIT 1)
            FROM priorities p WHERE p.priority IS NOT NULL
        ),
        ready AS MATERIALIZED (
            SELECT level.id FROM priorities p CROSS JOIN LATERAL (
                SELECT due.id FROM unnest(p_types) AS wanted(type) CROSS JOIN LATERAL (
                    SELECT r.id, r.run_at FROM task_ready r
                    WHERE r.queue = p_queue AND r.type = wanted.type
                      AND r.priority = p.priority AND r.run_at <= now()
                    ORDER BY r.run_at, r.id
                    LIMIT p_limit
                    FOR UPDATE SKIP LOCKED
                ) due
                ORDER BY due.run_at, due.id
                LIMIT p_limit
            ) level
            WHERE p.priority IS NOT NULL
            LIMIT p_limit
        ),
        held AS MATERIALIZED (
            SELECT t.id FROM task t
            WHERE t.id = ANY (ARRAY(SELECT id FROM ready))
            ORDER BY t.id
            FOR UPDATE SKIP LOCKED
        )
        SELECT id FROM held
        UNION ALL
        SELECT r.id FROM ready r LEFT JOIN held h USING (id)
        WHERE h.id IS NULL AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = r.id));
END
$$;

-- Picks and locks up to p_limit due tasks of any type in claim order, as tasklane_pick_of_types.
CREATE OR REPLACE FUNCTION tasklane_pick_any_type(p_queue text, p_limit integer, p_under_lock boolean)
    RETURNS bigint[]
    LANGUAGE plpgsql
    SET plan_cache_mode = force_generic_plan
    SET jit = off
AS $$
BEGIN
    RETURN ARRAY(
        WITH RECURSIVE priorities AS (
            (SELECT r.priority FROM task_ready r
             WHERE r.queue = p_queue AND r.priority BETWEEN -100 AND 100
               AND NOT EXISTS (SELECT 1 FROM queue q
                               WHERE q.name = p_queue AND (q.paused OR (q.flow_controlled AND NOT p_under_lock)))
             ORDER BY r.priority DESC LIMIT 1)
            UNION ALL
            SELECT (SELECT r.priority FROM task_ready r
                    WHERE r.queue = p_queue AND r.priority BETWEEN -100 AND 100 AND r.priority < p.priority
                    ORDER BY r.priority DESC LIMIT 1)
            FROM priorities p WHERE p.priority IS NOT NULL
        ),
        ready AS MATERIALIZED (
            SELECT due.id FROM priorities p CROSS JOIN LATERAL (
                SELECT r.id FROM task_ready r
                WHERE r.queue = p_queue AND r.priority BETWEEN -100 AND 100 AND r.priority = p.priority
                  AND r.run_at <= now()
                ORDER BY r.run_at, r.id
                LIMIT p_limit
                FOR UPDATE SKIP LOCKED
            ) due
            WHERE p.priority IS NOT NULL
            LIMIT p_limit
        ),
        held AS MATERIALIZED (
            SELECT t.id FROM task t
            WHERE t.id = ANY (ARRAY(SELECT id FROM ready))
            ORDER BY t.id
            FOR UPDATE SKIP LOCKED
        )
        SELECT id FROM held
        UNION ALL
        SELECT r.id FROM ready r LEFT JOIN held h USING (id)
        WHERE h.id IS NULL AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = r.id));
END
$$;

-- The claim's start: the ready rows go, the task rows become running (a HOT update), a running row
-- each, and the events as a batch (V022).
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
    WITH xact AS MATERIALIZED (
        SELECT pg_current_xact_id() AS xid WHERE cardinality(p_ids) > 0
    ),
    batch AS MATERIALIZED (
        SELECT nextval('task_event_batch_seq') AS first_id FROM xact
    ),
    taken AS (
        DELETE FROM task_ready r WHERE r.id = ANY (p_ids)
    ),
    changed AS (
        UPDATE task t
        SET state = 'running', worker_id = p_worker_id, lease_id = p_lease_id, attempt = t.attempt + 1,
            started_at = p_started_at,
            timeout_at = p_started_at + t.timeout_seconds * interval '1 second',
            lease_expires_at = least(p_started_at + p_lease_ms * interval '1 millisecond',
                                     p_started_at + t.timeout_seconds * interval '1 second'),
            progress_percent = NULL, progress_message = NULL,
            event_previous = t.event_batch, event_batch = batch.first_id
        FROM batch
        WHERE t.id = ANY (p_ids) AND t.state = 'queued'
        RETURNING t.*
    ),
    running AS (
        INSERT INTO task_running (id, queue, concurrency_key)
        SELECT c.id, c.queue, c.concurrency_key FROM changed c
    ),
    events AS (
        INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types, concurrency_keys,
                                      schedules, scheduled_fors, details, previous)
        SELECT c.event_batch, c.queue, count(*), array_agg(c.id ORDER BY c.id), array_agg(text 'running' ORDER BY c.id),
               array_agg(c.attempt ORDER BY c.id), array_agg(c.type ORDER BY c.id),
               CASE WHEN count(nullif(c.concurrency_key, '')) > 0
                    THEN array_agg(nullif(c.concurrency_key, '') ORDER BY c.id) END,
               CASE WHEN count(c.schedule) > 0 THEN array_agg(c.schedule ORDER BY c.id) END,
               CASE WHEN count(c.scheduled_for) > 0 THEN array_agg(c.scheduled_for ORDER BY c.id) END,
               array_agg(jsonb_build_object('workerId', c.worker_id) ORDER BY c.id),
               array_agg(c.event_previous ORDER BY c.id)
        FROM changed c
        GROUP BY c.event_batch, c.queue
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

-- As in V019, counting the queue's running tasks from their rows.
CREATE OR REPLACE FUNCTION tasklane_claim_under_flow(p_queue text, p_types text[], p_limit integer, p_worker_id text,
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
        q.max_running - (SELECT count(*) FROM task_running WHERE queue = p_queue),
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
