package dev.tasklane.testsupport;

/**
 * For tests that set a task's state by SQL rather than through the service: brings the task's
 * ready and running rows (V023) in line with its state, as every statement of the service keeps
 * them.
 */
public final class TaskRows {

    private TaskRows() {
    }

    /**
     * Gives the task a ready row as its row is now if it is queued and a running row if it is
     * running, and takes away the others.
     */
    public static void follow(long taskId) {
        Sql.update("""
                WITH task_now AS (SELECT * FROM task WHERE id = ?),
                unready AS (
                    DELETE FROM task_ready r WHERE r.id = ? AND NOT EXISTS (SELECT 1 FROM task_now WHERE state = 'queued')
                ),
                unrun AS (
                    DELETE FROM task_running r WHERE r.id = ? AND NOT EXISTS (SELECT 1 FROM task_now WHERE state = 'running')
                ),
                ready AS (
                    INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key)
                    SELECT id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key FROM task_now
                    WHERE state = 'queued'
                    ON CONFLICT (id) DO UPDATE SET queue = EXCLUDED.queue, type = EXCLUDED.type,
                        priority = EXCLUDED.priority, run_at = EXCLUDED.run_at,
                        concurrency_key = EXCLUDED.concurrency_key, created_at = EXCLUDED.created_at,
                        debounce_key = EXCLUDED.debounce_key
                )
                INSERT INTO task_running (id, queue, concurrency_key)
                SELECT id, queue, concurrency_key FROM task_now
                WHERE state = 'running' AND NOT EXISTS (SELECT 1 FROM task_running r WHERE r.id = task_now.id)""",
                taskId, taskId, taskId);
    }

    /**
     * {@link #follow} for every task of a queue, and takes away the ready and running rows of its
     * tasks that no longer exist: after tests insert or delete tasks by SQL.
     */
    public static void followQueue(String queue) {
        Sql.update("""
                WITH unready AS (
                    DELETE FROM task_ready r WHERE r.queue = ?
                      AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = r.id AND t.state = 'queued')
                ),
                unrun AS (
                    DELETE FROM task_running r WHERE r.queue = ?
                      AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = r.id AND t.state = 'running')
                ),
                ready AS (
                    INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key)
                    SELECT id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key FROM task t
                    WHERE t.queue = ? AND t.state = 'queued'
                    ON CONFLICT (id) DO UPDATE SET run_at = EXCLUDED.run_at, priority = EXCLUDED.priority,
                        type = EXCLUDED.type, concurrency_key = EXCLUDED.concurrency_key,
                        created_at = EXCLUDED.created_at, debounce_key = EXCLUDED.debounce_key
                )
                INSERT INTO task_running (id, queue, concurrency_key)
                SELECT id, queue, concurrency_key FROM task t
                WHERE t.queue = ? AND t.state = 'running' AND NOT EXISTS (SELECT 1 FROM task_running r WHERE r.id = t.id)""",
                queue, queue, queue, queue);
    }
}
