package dev.tasklane.testsupport;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Events written from a test as the service writes them (V022): the transaction's id first, then
 * the batch's id, then the task row naming its new event's batch, then the batch row.
 */
public final class EventRows {

    private EventRows() {
    }

    /** Appends one event to a task, on the given connection (its transaction, if one is open); returns its id. */
    public static long append(Connection connection, long taskId, String name, String detailJson) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("""
                WITH xact AS MATERIALIZED (SELECT pg_current_xact_id() AS xid),
                batch AS MATERIALIZED (SELECT nextval('task_event_batch_seq') AS first_id FROM xact),
                changed AS (
                    UPDATE task t SET event_previous = t.event_batch, event_batch = batch.first_id
                    FROM batch WHERE t.id = ? RETURNING t.*
                )
                INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types, details, previous)
                SELECT event_batch, queue, 1, ARRAY[id], ARRAY[?::text], ARRAY[attempt], ARRAY[type], ARRAY[?::jsonb],
                       ARRAY[event_previous]
                FROM changed
                RETURNING first_id""")) {
            statement.setLong(1, taskId);
            statement.setString(2, name);
            statement.setString(3, detailJson);
            try (ResultSet rows = statement.executeQuery()) {
                if (!rows.next()) {
                    throw new IllegalStateException("no task " + taskId);
                }
                return rows.getLong(1);
            }
        }
    }

    /** Appends a progress event to a task, on the given connection; returns its id. */
    public static long appendProgress(Connection connection, long taskId) throws SQLException {
        return append(connection, taskId, "progress", "{\"percent\": 1, \"message\": null}");
    }

    /**
     * Appends {@code count} events of tasks that do not exist (negative ids, which no task of a
     * later test can take) to a queue, {@code perBatch} to a batch, in one committed statement.
     */
    public static void appendOrphans(String queue, int count, int perBatch, String name, String detailSql) {
        Sql.update("""
                WITH xact AS MATERIALIZED (SELECT pg_current_xact_id() AS xid),
                batches AS MATERIALIZED (
                    SELECT b, nextval('task_event_batch_seq') AS first_id
                    FROM generate_series(0, (? - 1) / ?) b CROSS JOIN xact
                )
                INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types, details, previous)
                SELECT first_id, ?, count(*), array_agg(-g), array_agg(?::text), array_agg(0), array_agg('t'::text),
                       array_agg(%s), array_agg(NULL::bigint)
                FROM batches JOIN generate_series(1, ?) g ON (g - 1) / ? = batches.b
                GROUP BY first_id""".formatted(detailSql), count, perBatch, queue, name, count, perBatch);
    }

    /**
     * Appends an event named {@code name} to every task of a queue, {@code perBatch} to a batch in
     * id order, in one committed statement.
     */
    public static void appendToEvery(String queue, int perBatch, String name) {
        Sql.update("""
                WITH xact AS MATERIALIZED (SELECT pg_current_xact_id() AS xid),
                locked AS MATERIALIZED (
                    SELECT id, attempt, type, event_batch FROM task WHERE queue = ? ORDER BY id FOR UPDATE
                ),
                tasks AS MATERIALIZED (
                    SELECT locked.*, (row_number() OVER (ORDER BY id) - 1) / ? AS b FROM locked
                ),
                batches AS MATERIALIZED (
                    SELECT b, nextval('task_event_batch_seq') AS first_id
                    FROM (SELECT DISTINCT b FROM tasks) d CROSS JOIN xact ORDER BY b
                ),
                linked AS (
                    UPDATE task t SET event_previous = t.event_batch, event_batch = batches.first_id
                    FROM tasks JOIN batches USING (b) WHERE t.id = tasks.id
                )
                INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types, details, previous)
                SELECT first_id, ?, count(*), array_agg(id ORDER BY id), array_agg(?::text), array_agg(attempt ORDER BY id),
                       array_agg(type ORDER BY id), array_agg('{}'::jsonb), array_agg(event_batch ORDER BY id)
                FROM tasks JOIN batches USING (b)
                GROUP BY first_id""", queue, perBatch, queue, name);
    }

    /** Makes the batches that hold a task's events look written {@code days} ago. */
    public static void age(long taskId, int days) {
        Sql.update("UPDATE task_event_batch SET at = now() - ? * interval '1 day' WHERE first_id IN "
                + "(SELECT batch FROM task_event WHERE task_id = ?)", days, taskId);
    }
}
