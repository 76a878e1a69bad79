package dev.tasklane.testsupport;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Records the blocking calls BlockHound finds instead of throwing its error where they happen,
 * and {@link NoBlockingCalls} fails the test they happened in. Thrown, the error is unsafe: most
 * finds are a contended lock, and an error thrown from inside the JDK's lock acquisition leaves a
 * dead waiter queued on that lock, which wedges it for good (seen: a Reactor scheduler's task
 * queue, after which every timer on that worker stopped and later tests hung with nothing logged).
 * The callback runs on the offending thread, so it only adds to memory.
 */
public final class BlockingCallsSeen implements BlockHoundIntegration {

    private static final int KEPT = 50;
    private static final AtomicInteger COUNT = new AtomicInteger();
    private static final AtomicInteger MADE_ON_PURPOSE = new AtomicInteger();
    private static final ConcurrentLinkedQueue<Seen> SEEN = new ConcurrentLinkedQueue<>();

    /** One blocking call: the thread it was made on, and an error that holds its stack. */
    public record Seen(String thread, BlockingOperationError error) {

        String describe() {
            StringBuilder text = new StringBuilder("Blocking call on \"").append(thread).append("\": ")
                    .append(error.getMessage()).append('\n');
            for (StackTraceElement frame : error.getStackTrace()) {
                text.append("    at ").append(frame).append('\n');
            }
            return text.toString();
        }
    }

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.blockingMethodCallback(method -> {
            if (COUNT.getAndIncrement() < KEPT) {
                SEEN.add(new Seen(Thread.currentThread().getName(), new BlockingOperationError(method)));
            }
        });
    }

    /** How many blocking calls were found in this JVM so far, less those made on purpose. */
    static int count() {
        return COUNT.get() - MADE_ON_PURPOSE.get();
    }

    /** How many blocking calls were found in this JVM so far, all told. */
    public static int found() {
        return COUNT.get();
    }

    /** Tells {@link NoBlockingCalls} that a test made {@code calls} blocking calls on purpose. */
    public static void madeOnPurpose(int calls) {
        MADE_ON_PURPOSE.addAndGet(calls);
    }

    /** The blocking calls found in this JVM (the first few), oldest first. */
    public static List<Seen> seen() {
        return List.copyOf(SEEN);
    }
}
