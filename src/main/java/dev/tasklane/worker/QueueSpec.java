package dev.tasklane.worker;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One entry of {@code TASKLANE_WORKER_QUEUES}.
 *
 * @param queue the queue
 * @param concurrency how many of its tasks run at once on this replica
 */
record QueueSpec(String queue, int concurrency) {

    private static final Pattern ENTRY = Pattern.compile("([A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}):(\\d{1,4})");

    /** Parses {@code name:concurrency,...}; a bad entry stops the replica at start. */
    static List<QueueSpec> parseAll(List<String> entries) {
        List<QueueSpec> specs = new ArrayList<>();
        for (String entry : entries) {
            var match = ENTRY.matcher(entry);
            if (!match.matches() || Integer.parseInt(match.group(2)) < 1) {
                throw new IllegalArgumentException("TASKLANE_WORKER_QUEUES entry '" + entry
                        + "' is not name:concurrency (a queue name and a number from 1 to 9999)");
            }
            if (specs.stream().anyMatch(s -> s.queue().equals(match.group(1)))) {
                throw new IllegalArgumentException("TASKLANE_WORKER_QUEUES names queue '" + match.group(1) + "' twice");
            }
            specs.add(new QueueSpec(match.group(1), Integer.parseInt(match.group(2))));
        }
        return List.copyOf(specs);
    }
}
