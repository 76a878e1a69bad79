-- The queue itself: one row per task, from enqueue until retention prunes it.
--
-- Rows churn hard (inserted, updated two or three times, deleted), so the table leaves room on
-- each page for the next version of a row and asks autovacuum to come early and often rather
-- than let dead tuples pile up behind a burst. Heartbeats and progress touch only unindexed
-- columns, so those updates stay HOT; state changes cannot be (state is in the index predicates).
CREATE TABLE task (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue            text        NOT NULL,
    type             text        NOT NULL,
    payload          jsonb,
    state            text        NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    priority         smallint    NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
    attempt          integer     NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    max_attempts     integer     NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
    run_at           timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    worker_id        text,
    lease_expires_at timestamptz,
    progress_percent smallint CHECK (progress_percent BETWEEN 0 AND 100),
    progress_message text,
    result           jsonb,
    last_error       text,
    idempotency_key  text
) WITH (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 1
);

-- The claim reads this index in exactly its ORDER BY, on waiting rows only, so its cost depends
-- on the batch size and not on how many tasks wait (a backlog of millions after an outage) nor
-- on how many finished ones the table still holds.
CREATE INDEX task_claim_idx ON task (queue, priority DESC, run_at, id) WHERE state = 'queued';

-- Running tasks are few (bounded by the workers' capacity); the lease rescuer and the running
-- counts scan them here. Indexing lease_expires_at instead would make every heartbeat non-HOT.
CREATE INDEX task_running_idx ON task (queue) WHERE state = 'running';

-- An idempotency key is unique per queue while its task exists.
CREATE UNIQUE INDEX task_idempotency_key_idx ON task (queue, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- Listing newest first, filtered by queue or by state (GET /tasks).
CREATE INDEX task_queue_id_idx ON task (queue, id);
CREATE INDEX task_state_id_idx ON task (state, id);

-- Retention deletes terminal tasks by age.
CREATE INDEX task_finished_at_idx ON task (finished_at) WHERE finished_at IS NOT NULL;
