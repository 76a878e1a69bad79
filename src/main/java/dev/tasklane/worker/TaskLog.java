package dev.tasklane.worker;

import dev.tasklane.queue.Task;
import org.slf4j.Logger;
import org.slf4j.MDC;

/**
 * Log lines about one task, with its id, queue, worker and trace in the MDC: structured logs
 * ({@code LOGGING_STRUCTURED_FORMAT_CONSOLE=ecs}) carry them as fields, so one task's story can
 * be found across replicas. The MDC is set around the one call, on whatever thread it runs.
 */
final class TaskLog {

    private TaskLog() {
    }

    static void info(Logger log, Task task, String workerId, String message, Object... arguments) {
        withContext(task, workerId, () -> log.info(message, arguments));
    }

    static void warn(Logger log, Task task, String workerId, String message, Object... arguments) {
        withContext(task, workerId, () -> log.warn(message, arguments));
    }

    private static void withContext(Task task, String workerId, Runnable logCall) {
        String traceparent = task.traceparent();
        try (MDC.MDCCloseable id = MDC.putCloseable("task.id", Long.toString(task.id()));
             MDC.MDCCloseable queue = MDC.putCloseable("task.queue", task.queue());
             MDC.MDCCloseable worker = MDC.putCloseable("worker.id", workerId)) {
            if (traceparent == null) {
                logCall.run();
                return;
            }
            // The trace the task belongs to (the enqueue's span), under the names that Boot's
            // log correlation and structured formats use.
            try (MDC.MDCCloseable trace = MDC.putCloseable("traceId", traceparent.substring(3, 35));
                 MDC.MDCCloseable span = MDC.putCloseable("spanId", traceparent.substring(36, 52))) {
                logCall.run();
            }
        }
    }
}
