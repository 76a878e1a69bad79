-- Flow control: concurrency keys on tasks, and per-queue limits that claims obey exactly.
--
-- A task's concurrency key groups it with the other tasks of its queue that share the key (a
-- tenant, a customer). Tasks without one form one group of their own, stored as '' (a key given
-- over the API has 1..128 characters), so that every group is an ordinary value in the indexes
-- and comparisons. Adding a column with a constant default rewrites nothing.
ALTER TABLE task ADD COLUMN concurrency_key text NOT NULL DEFAULT ''
    CONSTRAINT task_concurrency_key_check CHECK (length(concurrency_key) <= 128);

-- Events carry the key of their task (null when it has none), as the task JSON does.
ALTER TABLE task_event ADD COLUMN concurrency_key text;

-- A queue's flow control. Null means no such limit. A queue with any of them set (or round-robin
-- fairness) is claimed only under the lock of its row here, and the claims of other queues'
-- statement refuse it (flow_controlled), so that no claim can bypass the limits.
ALTER TABLE queue
    ADD COLUMN max_running integer CHECK (max_running BETWEEN 1 AND 1000000),
    ADD COLUMN max_running_per_key integer CHECK (max_running_per_key BETWEEN 1 AND 1000000),
    ADD COLUMN rate_count integer CHECK (rate_count BETWEEN 1 AND 1000000),
    ADD COLUMN rate_period_seconds integer CHECK (rate_period_seconds BETWEEN 1 AND 1000000),
    ADD COLUMN rate_per_key_count integer CHECK (rate_per_key_count BETWEEN 1 AND 1000000),
    ADD COLUMN rate_per_key_period_seconds integer CHECK (rate_per_key_period_seconds BETWEEN 1 AND 1000000),
    ADD COLUMN fairness text NOT NULL DEFAULT 'fifo' CHECK (fairness IN ('fifo', 'round-robin')),
    -- round-robin: the key that had the last turn; the next claim starts after it
    ADD COLUMN last_key text,
    ADD CONSTRAINT queue_rate_check CHECK ((rate_count IS NULL) = (rate_period_seconds IS NULL)),
    ADD CONSTRAINT queue_rate_per_key_check CHECK ((rate_per_key_count IS NULL) = (rate_per_key_period_seconds IS NULL)),
    ADD COLUMN flow_controlled boolean GENERATED ALWAYS AS (
        max_running IS NOT NULL OR max_running_per_key IS NOT NULL OR rate_count IS NOT NULL
        OR rate_per_key_count IS NOT NULL OR fairness <> 'fifo') STORED;

-- The claims that rate limits count: one row per claim statement and key, with how many tasks it
-- started and when (the statement's start, taken under the queue's lock, so that the times rise
-- in the order the claims ran). A released claim keeps its row: it gives back its slot, not its
-- quota. Each rate-limited claim deletes its queue's rows that no window can see any more.
CREATE TABLE queue_claim_start (
    queue           text        NOT NULL,
    concurrency_key text        NOT NULL,
    started_at      timestamptz NOT NULL,
    tasks           integer     NOT NULL
);

CREATE INDEX queue_claim_start_idx ON queue_claim_start (queue, started_at);
CREATE INDEX queue_claim_start_key_idx ON queue_claim_start (queue, concurrency_key, started_at);
