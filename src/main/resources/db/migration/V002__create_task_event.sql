-- The durable event log: every change of a task appends one row here in the transaction of
-- the change, and the event streams are served from it.
--
-- Ids come from a sequence with no cache, so they are handed out in the order the inserts run.
-- They become visible in commit order, which can differ; the event reader therefore never
-- trusts "everything after id X" until every transaction that could still hold a smaller id
-- has ended (see EventLog). For that rule every statement that appends an event must already
-- own a transaction id when it takes the event's id: it writes the task row first.
CREATE TABLE task_event (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id   bigint      NOT NULL,
    queue     text        NOT NULL,
    task_type text        NOT NULL,
    name      text        NOT NULL
              CHECK (name IN ('queued', 'running', 'progress', 'succeeded', 'failed', 'cancelled')),
    state     text        NOT NULL,
    attempt   integer     NOT NULL,
    at        timestamptz NOT NULL DEFAULT now(),
    -- name-specific fields: runAt and error (queued), workerId (running), percent and message
    -- (progress), result (succeeded), error (failed)
    detail    jsonb
) WITH (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);

-- A task's own stream replays its history from here.
CREATE INDEX task_event_task_idx ON task_event (task_id, id);
