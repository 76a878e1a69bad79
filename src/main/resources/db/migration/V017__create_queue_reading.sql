-- The last reading of the queue gauges (depth, oldest age, held back), shared by the replicas:
-- behind a large backlog the count reads for a while (0.2 s of a database core per million
-- waiting tasks), and every replica counting every interval multiplied that by the replicas.
-- One replica counts at a time, holding a transaction-level advisory lock while it does (see
-- QueueSql.TAKE_READING_TURN); the others report the reading it saved here. A reader that dies
-- mid-count rolls back and frees the turn for the next.
CREATE TABLE queue_reading (
    id        boolean     PRIMARY KEY DEFAULT true CHECK (id),
    read_at   timestamptz NOT NULL DEFAULT '-infinity',
    depths    jsonb       NOT NULL DEFAULT '[]',
    held_back jsonb       NOT NULL DEFAULT '[]'
);

INSERT INTO queue_reading DEFAULT VALUES;
