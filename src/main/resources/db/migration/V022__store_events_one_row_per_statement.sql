-- The event log stores one row per statement and queue instead of one row per event.
--
-- A row of task_event cost a heap tuple and three index entries per event: two per task in a
-- burn-down, as much as the task's own updates. A batch holds the events of one statement for one
-- queue as columns of arrays, with one index entry per batch (two with the queue's index). An
-- event's id is its batch's first_id plus its position in the batch (from 0): batches draw their
-- first_id from a sequence that steps by 4096, so ids still rise in the order the batches were
-- written, a batch holds at most 4096 events, and ids are no longer dense (the README never said
-- they were). The ordering rule of V002 stays: a statement owns a transaction id before it draws
-- a batch id (it calls pg_current_xact_id() first, since it now draws before it writes).
--
-- A task's own stream replays its events without an index on task ids (which would cost an entry
-- per event again): the task row names the batch of its last event (event_batch), and each event
-- names the batch of the task's event before it (previous), a chain that the per-task replay walks
-- back. The update that appends an event sets event_previous to the old event_batch, so that its
-- RETURNING hands the old link to the batch insert.
--
-- The events written before this migration move into single-event batches whose first_id is their
-- old id, so that a cursor a client saved before the upgrade resumes where it was; new batches draw
-- ids above every old one. task_event becomes a view of every event, one row each, for people and
-- tests; the service reads the batches directly.
--
-- Replicas of the previous release write task_event rows, which this migration removes: it refuses
-- to run while any is connected (their event listeners' connections say so by application_name).

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'tasklane-listener'
                 AND pid <> pg_backend_pid()) THEN
        RAISE EXCEPTION 'tasklane replicas of an earlier release are connected to this database'
            USING DETAIL = 'This release stores events in a new form that earlier replicas cannot write.',
                  HINT = 'Stop every replica of the earlier release (scale it to zero), then start this one.';
    END IF;
END
$$;

LOCK TABLE task, task_event IN ACCESS EXCLUSIVE MODE;

ALTER TABLE task ADD COLUMN event_batch bigint, ADD COLUMN event_previous bigint;

CREATE TABLE task_event_batch (
    first_id          bigint      PRIMARY KEY,
    queue             text        NOT NULL,
    at                timestamptz NOT NULL DEFAULT now(),
    -- how many events: the readers count pages by it without reading the arrays
    size              integer     NOT NULL,
    task_ids          bigint[]    NOT NULL,
    names             text[]      NOT NULL,
    attempts          integer[]   NOT NULL,
    task_types        text[]      NOT NULL,
    -- null when no event of the batch has one
    concurrency_keys  text[],
    schedules         text[],
    scheduled_fors    timestamptz[],
    details           jsonb[]     NOT NULL,
    previous          bigint[]    NOT NULL,
    CHECK (size BETWEEN 1 AND 4096 AND cardinality(task_ids) = size)
) WITH (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);

-- One queue's stream replays from here.
CREATE INDEX task_event_batch_queue_idx ON task_event_batch (queue, first_id);

INSERT INTO task_event_batch (first_id, queue, at, size, task_ids, names, attempts, task_types, concurrency_keys,
                              schedules, scheduled_fors, details, previous)
SELECT id, queue, at, 1, ARRAY[task_id], ARRAY[name], ARRAY[attempt], ARRAY[task_type],
       CASE WHEN concurrency_key IS NOT NULL THEN ARRAY[concurrency_key] END,
       CASE WHEN schedule IS NOT NULL THEN ARRAY[schedule] END,
       CASE WHEN scheduled_for IS NOT NULL THEN ARRAY[scheduled_for] END,
       ARRAY[coalesce(detail, '{}'::jsonb)], ARRAY[lag(id) OVER (PARTITION BY task_id ORDER BY id)]
FROM task_event;

UPDATE task t SET event_batch = last.id
FROM (SELECT task_id, max(id) AS id FROM task_event GROUP BY task_id) last
WHERE t.id = last.task_id;

CREATE SEQUENCE task_event_batch_seq INCREMENT BY 4096 MINVALUE 1 NO CYCLE;

-- Above every id the old sequence handed out, committed or not.
SELECT setval('task_event_batch_seq',
              (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM task_event_id_seq),
              false);

DROP TABLE task_event;

CREATE VIEW task_event AS
SELECT b.first_id + e.k - 1 AS id, e.task_id, b.queue, e.task_type, e.name,
       CASE e.name WHEN 'progress' THEN 'running' ELSE e.name END AS state, e.attempt, b.at, e.detail,
       octet_length(e.detail::text) AS detail_bytes, e.concurrency_key, e.schedule, e.scheduled_for,
       b.first_id AS batch, e.previous
FROM task_event_batch b
CROSS JOIN LATERAL unnest(b.task_ids, b.names, b.attempts, b.task_types, b.concurrency_keys, b.schedules,
                          b.scheduled_fors, b.details, b.previous)
    WITH ORDINALITY AS e(task_id, name, attempt, task_type, concurrency_key, schedule, scheduled_for, detail,
                         previous, k);

-- The claim's start, as in V021, appending its events as a batch.
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
        WHERE t.id = ANY (p_ids)
        RETURNING t.*
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
