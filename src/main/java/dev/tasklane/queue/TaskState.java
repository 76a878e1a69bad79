package dev.tasklane.queue;

import java.util.Arrays;
import java.util.Optional;

/** Where a task is in its life; the last three are terminal until a retry. */
public enum TaskState {
    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED;

    /** The name used in JSON and in the database. */
    public String wireName() {
        return name().toLowerCase();
    }

    public boolean isTerminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }

    public static Optional<TaskState> fromWireName(String name) {
        return Arrays.stream(values()).filter(s -> s.wireName().equals(name)).findFirst();
    }

    static TaskState fromColumn(String value) {
        return valueOf(value.toUpperCase());
    }
}
