-- Unique tasks and debounce. Both are checked at enqueue only, under a transaction-level advisory
-- lock per (queue, kind, key), and never by a unique index: a task's later state changes (claim,
-- retry, outcome) must never be refused because another task holds the same key.
--
-- unique_key: the key the task was enqueued with (or a hash of its type and payload).
-- debounce_key / debounce_until: while the task waits (queued, attempt 0), an enqueue with the
-- same key replaces its payload and moves its run_at, never past debounce_until.
-- Adding nullable columns rewrites nothing; rows without a key are in neither index.
ALTER TABLE task
    ADD COLUMN unique_key text,
    ADD COLUMN debounce_key text,
    ADD COLUMN debounce_until timestamptz;

CREATE INDEX task_unique_key_idx ON task (queue, unique_key, id) WHERE unique_key IS NOT NULL;
CREATE INDEX task_debounce_key_idx ON task (queue, debounce_key, id)
    WHERE debounce_key IS NOT NULL AND state = 'queued' AND attempt = 0;

-- Tasks made by a schedule, and their events, carry it and the fire time they stand for.
ALTER TABLE task
    ADD COLUMN schedule text,
    ADD COLUMN scheduled_for timestamptz;
ALTER TABLE task_event
    ADD COLUMN schedule text,
    ADD COLUMN scheduled_for timestamptz;

-- overlap: skip reads a schedule's newest task; GET /tasks?schedule= lists them.
CREATE INDEX task_schedule_idx ON task (schedule, id) WHERE schedule IS NOT NULL;
