package dev.tasklane.testsupport;

import java.util.concurrent.atomic.AtomicInteger;

/** Names that keep tests apart in the shared database. */
public final class TaskFixtures {

    private static final AtomicInteger QUEUES = new AtomicInteger();
    private static final String RUN = Long.toString(System.nanoTime() % 1_000_000, 36);

    private TaskFixtures() {
    }

    /** A queue name no other test uses. */
    public static String uniqueQueue(String purpose) {
        return purpose + "-" + RUN + "-" + QUEUES.incrementAndGet();
    }
}
