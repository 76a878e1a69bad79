-- Leases that cannot be confused, and a bound on every attempt.
--
-- lease_id names one claim of a task: every outcome, renewal and release is checked against it,
-- so that a late answer from an earlier claim (a retried task claimed again by the same worker,
-- a released long poll, a replica that lost its lease) can never change the attempt that followed.
-- It is drawn by the claimer before the statement is sent, so that a claim whose answer was lost
-- can still be found and released.
--
-- timeout_seconds bounds one attempt; it is stored with the task at enqueue (the replica's
-- TASKLANE_TASK_TIMEOUT when the request gives none), and a claim turns it into timeout_at. A
-- lease is never extended past timeout_at, so an attempt that outlives it is rescued like any
-- other whose lease expired. Existing rows get the default of two hours.
ALTER TABLE task ADD COLUMN lease_id uuid;
ALTER TABLE task ADD COLUMN timeout_seconds integer NOT NULL DEFAULT 7200
    CONSTRAINT task_timeout_seconds_check CHECK (timeout_seconds BETWEEN 1 AND 604800);
ALTER TABLE task ADD COLUMN timeout_at timestamptz;
