-- Queues exist implicitly through their tasks; a row here exists only for a queue that has
-- been paused or resumed, and carries that flag. Claims join against it, so keep it tiny.
CREATE TABLE queue (
    name       text        PRIMARY KEY,
    paused     boolean     NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now()
);
