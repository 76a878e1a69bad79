-- The W3C traceparent of the request that enqueued the task, so that claiming and running it
-- continue that trace (in-process, or in a pull worker, which gets it with the claimed task).
-- No default: adding the column rewrites nothing.
ALTER TABLE task ADD COLUMN traceparent text;
