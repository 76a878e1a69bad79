-- Claims that ask for some task types (every in-process pipeline does: it takes only the types it
-- has handlers for) read this index, one type at a time, so that due tasks of other types on the
-- same queue cost them nothing. Built CONCURRENTLY, in a migration of its own that Flyway runs
-- outside a transaction, so that a large queue keeps taking enqueues while it is built; IF NOT
-- EXISTS lets an operator build it by hand ahead of an upgrade.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_claim_type_idx
    ON task (queue, type, priority DESC, run_at, id) WHERE state = 'queued';
