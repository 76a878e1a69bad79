package dev.tasklane.queue;

import dev.tasklane.testsupport.Sql;

/**
 * A schema of a test's own with empty copies of the service's tables, so that its statistics,
 * plans and counters see only what the test puts there; the service's statements run in it with
 * {@code search_path = <schema>, public}.
 */
final class TaskSchemas {

    private TaskSchemas() {
    }

    /** Creates the schema with the task, narrow, event and queue tables and the batch sequence; answers its name. */
    static String create(String schema) {
        Sql.update("CREATE SCHEMA " + schema);
        for (String table : new String[] {"task", "task_ready", "task_running", "task_event_batch", "queue",
                "queue_claim_start"}) {
            Sql.update("CREATE TABLE " + schema + "." + table + " (LIKE public." + table + " INCLUDING ALL)");
        }
        Sql.update("CREATE SEQUENCE " + schema + ".task_event_batch_seq INCREMENT BY 4096");
        return schema;
    }

    static void drop(String schema) {
        Sql.update("DROP SCHEMA " + schema + " CASCADE");
    }
}
