-- Cron schedules. Every replica runs the scheduler; none is a leader. A fire time becomes a task
-- only through a row of schedule_fire, whose primary key lets exactly one transaction claim it,
-- so no number of replicas (starting, stopping, racing at the fire time) makes two tasks of one
-- fire time. The fire times live apart from the tasks, so deleting or pruning tasks never frees
-- one to run again.
CREATE TABLE schedule (
    name          text        PRIMARY KEY,
    cron          text        NOT NULL,
    timezone      text        NOT NULL,
    queue         text        NOT NULL,
    task          jsonb       NOT NULL,
    overlap       text        NOT NULL CHECK (overlap IN ('allow', 'skip')),
    catch_up      text        NOT NULL CHECK (catch_up IN ('none', 'latest', 'all')),
    paused        boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    resumed_at    timestamptz,
    -- fire times at or before this are settled: made into tasks, skipped, or before the schedule
    -- existed (its creation, last PUT or last resume)
    settled_until timestamptz NOT NULL,
    -- the first fire time after settled_until, kept so that the scheduler reads only due rows
    next_fire_at  timestamptz
);

CREATE INDEX schedule_next_fire_idx ON schedule (next_fire_at) WHERE NOT paused;

CREATE TABLE schedule_fire (
    schedule   text        NOT NULL REFERENCES schedule (name) ON DELETE CASCADE,
    fire_at    timestamptz NOT NULL,
    task_id    bigint,
    -- 'enqueued', or 'skipped' (overlap: skip found the previous task still running)
    outcome    text        NOT NULL CHECK (outcome IN ('enqueued', 'skipped')),
    fired_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schedule, fire_at)
);
