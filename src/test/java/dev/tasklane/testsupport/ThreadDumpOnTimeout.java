package dev.tasklane.testsupport;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * When a test fails on a timeout, writes every thread of the test JVM (client and server share
 * it) and the blocking calls BlockHound recorded to {@code target/thread-dumps/} and to standard
 * error, so a request that never answers shows where it waits. The two causes of such hangs found
 * so far (nothing in the server's log either time): a lock wedged by BlockHound's own error (see
 * {@link BlockingCallsSeen}) and a Reactor Netty keep-alive bug (see the pom). It never changes
 * the outcome. (Never {@code jstack} a surefire fork instead: its standard output is Maven's
 * channel, and the fork dies.)
 */
public final class ThreadDumpOnTimeout implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        if (causedByTimeout(failure)) {
            dump(context.getRequiredTestClass().getSimpleName() + "." + context.getRequiredTestMethod().getName());
        }
        throw failure;
    }

    /**
     * Every session of the test server with a transaction or a snapshot, oldest first: one that
     * stays open holds back the event log's horizon (and every stream behind it).
     */
    private static String databaseActivity() {
        StringBuilder text = new StringBuilder("\nDatabase sessions with a transaction or snapshot:\n");
        try (java.sql.Connection connection = TestDatabase.get().connect();
             java.sql.Statement statement = connection.createStatement();
             java.sql.ResultSet rows = statement.executeQuery("SELECT pid, datname, state, now() - xact_start AS age,"
                     + " backend_xid, backend_xmin, wait_event_type, wait_event, left(query, 300) AS query"
                     + " FROM pg_stat_activity WHERE (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)"
                     + " AND pid <> pg_backend_pid() ORDER BY xact_start")) {
            while (rows.next()) {
                text.append("  pid=").append(rows.getString("pid")).append(" db=").append(rows.getString("datname"))
                        .append(" state=").append(rows.getString("state")).append(" age=").append(rows.getString("age"))
                        .append(" xid=").append(rows.getString("backend_xid")).append(" xmin=")
                        .append(rows.getString("backend_xmin")).append(" wait=").append(rows.getString("wait_event_type"))
                        .append('/').append(rows.getString("wait_event")).append(" query=")
                        .append(rows.getString("query").replaceAll("\\s+", " ")).append('\n');
            }
        } catch (java.sql.SQLException | RuntimeException e) {
            text.append("  (could not read: ").append(e).append(")\n");
        }
        return text.toString();
    }

    private static boolean causedByTimeout(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof TimeoutException || String.valueOf(cause.getMessage()).contains("Timeout")) {
                return true;
            }
        }
        return false;
    }

    private static void dump(String test) {
        StringBuilder text = new StringBuilder();
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            text.append('"').append(thread.getThreadName()).append("\" ").append(thread.getThreadState()).append('\n');
            for (StackTraceElement frame : thread.getStackTrace()) {
                text.append("    at ").append(frame).append('\n');
            }
            text.append('\n');
        }
        BlockingCallsSeen.seen().forEach(seen -> text.append(seen.describe()).append('\n'));
        text.append(databaseActivity());
        try {
            Path directory = Files.createDirectories(Path.of("target", "thread-dumps"));
            Path file = directory.resolve(test + "-" + System.currentTimeMillis() + ".txt");
            Files.writeString(file, text);
            System.err.println("Thread dump of the timed-out test " + test + " (also in " + file.toAbsolutePath() + "):\n"
                    + text);
        } catch (IOException e) {
            System.err.println("Could not write a thread dump: " + e);
        }
    }
}
