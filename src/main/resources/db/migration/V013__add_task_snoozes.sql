-- Snooze: a handler or pull worker may ask to run the task later without spending an attempt.
-- Snoozes are counted on the task; past max_snoozes (an enqueue field) a snooze fails the attempt
-- as retryable instead, so that a task cannot snooze forever. Constant defaults rewrite nothing.
ALTER TABLE task ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
ALTER TABLE task ADD COLUMN max_snoozes integer NOT NULL DEFAULT 100
    CONSTRAINT task_max_snoozes_check CHECK (max_snoozes BETWEEN 0 AND 10000);
