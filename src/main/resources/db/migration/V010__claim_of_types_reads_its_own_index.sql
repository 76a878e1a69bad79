-- A claim for some task types must read the typed index, never task_claim_idx. Where a queue's
-- tasks are all of one type, the planner rates `type = <a wanted type>` as true of every row and
-- prefers task_claim_idx, filtering by type: it then walks the whole queue once for each wanted
-- type that has no tasks (half a second a claim, with a million waiting). The typed statements
-- say "queued" as a range, which proves this index's predicate and not task_claim_idx's, so the
-- planner has no wrong index to choose. Both statements are CONCURRENTLY, outside a transaction,
-- so that enqueues go on meanwhile; IF [NOT] EXISTS lets an operator run them by hand ahead of an
-- upgrade.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_claim_of_types_idx
    ON task (queue, type, priority DESC, run_at, id) WHERE state BETWEEN 'queued' AND 'queued';

DROP INDEX CONCURRENTLY IF EXISTS task_claim_type_idx;
