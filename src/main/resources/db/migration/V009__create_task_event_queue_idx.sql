-- A stream of one queue's events replays from here (`GET /events?queue=...` with a cursor):
-- it reads that queue's events after the cursor, not the whole log. Built CONCURRENTLY in a
-- migration of its own, outside a transaction, so that event inserts go on while it is built.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_event_queue_idx ON task_event (queue, id);
