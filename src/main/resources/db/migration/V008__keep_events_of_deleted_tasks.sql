-- Deleting a task leaves its events to retention.
--
-- A task deleted right after it finished took its events with it, before every stream had
-- delivered them, and without the `gap` that retention announces: a subscriber resuming after
-- them lost them silently. Now the task row goes at once (its id answers 404) and a tombstone
-- remembers when it finished; retention deletes its events with the tombstone once they are as
-- old as any other, and raises the pruned-through mark as it does for every task.
CREATE TABLE task_tombstone (
    task_id     bigint      PRIMARY KEY,
    finished_at timestamptz NOT NULL
);

CREATE INDEX task_tombstone_finished_at_idx ON task_tombstone (finished_at);

-- How many bytes an event's detail takes as JSON text (a `succeeded` event carries the task's
-- result, up to the payload limit): the event reader and the replays read pages bounded by it,
-- so that memory is bounded by bytes, not by a count of rows whatever their results weigh.
-- Computed once, when the event is written. Adding it rewrites the table once.
ALTER TABLE task_event ADD COLUMN detail_bytes integer
    GENERATED ALWAYS AS (octet_length(detail::text)) STORED;
