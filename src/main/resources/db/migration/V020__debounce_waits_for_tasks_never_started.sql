-- Unique `waiting` and debounce mean "has never started", not "attempt 0": a snooze puts the
-- attempt count back, so a task that ran and snoozed was taken for a waiting one, and the next
-- debounced enqueue replaced its payload and pulled its run forward. A claim sets started_at
-- and nothing but a retry clears it, so started_at IS NULL is exactly "never started".
-- Built CONCURRENTLY (outside a transaction), so a large queue keeps taking enqueues meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_debounce_waiting_idx ON task (queue, debounce_key, id)
    WHERE debounce_key IS NOT NULL AND state = 'queued' AND started_at IS NULL;

DROP INDEX CONCURRENTLY IF EXISTS task_debounce_key_idx;
