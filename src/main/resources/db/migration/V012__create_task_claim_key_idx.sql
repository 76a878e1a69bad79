-- Claims on queues with per-key limits or round-robin fairness walk the keys that have waiting
-- tasks (a seek each) and read each key's tasks in claim order from the first index. Its
-- predicate names waiting rows by what only they lack (a lease, a finish), and those statements
-- say it that way and test the state in a form no index can use: no other index can then serve
-- them, which matters when the statistics are stale (a burst of tasks on a queue the last ANALYZE
-- never saw). Asked "state = 'queued'", the planner walked the whole state index once per key,
-- four seconds a claim. The running tasks are counted per key from the second index, under the
-- queue's lock. Both CONCURRENTLY, outside a transaction, so that enqueues go on while they are
-- built; the old running index, which the new one serves as well, goes last.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_claim_key_idx
    ON task (queue, concurrency_key, priority DESC, run_at, id) WHERE lease_id IS NULL AND finished_at IS NULL;

CREATE INDEX CONCURRENTLY IF NOT EXISTS task_running_key_idx
    ON task (queue, concurrency_key) WHERE state = 'running';

DROP INDEX CONCURRENTLY IF EXISTS task_running_idx;
