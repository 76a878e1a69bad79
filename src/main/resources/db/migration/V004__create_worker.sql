-- The worker registry from the article: one row per live worker, replicas and pull workers
-- alike, refreshed by heartbeats and removed once stale.
CREATE TABLE worker (
    id           text        PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('replica', 'pull')),
    queues       text[]      NOT NULL DEFAULT '{}',
    in_flight    integer     NOT NULL DEFAULT 0,
    started_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX worker_last_seen_at_idx ON worker (last_seen_at);
