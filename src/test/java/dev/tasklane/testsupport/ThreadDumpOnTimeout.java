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
