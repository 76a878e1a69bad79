package dev.tasklane.api;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** What a token may do; a token has one or more. */
enum Scope {
    /** Every GET, the event streams included. */
    READ,
    /** Enqueue tasks (one or a batch), and trigger a schedule. */
    ENQUEUE,
    /** The pull API: claims, heartbeat, progress, complete, fail, snooze. */
    WORK,
    /** Everything else: cancel, retry, delete, pause and resume, queue settings, schedules, bulk actions. */
    ADMIN;

    String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The authority Spring Security checks for it. */
    String authority() {
        return "SCOPE_" + wireName();
    }

    static Optional<Scope> fromWireName(String name) {
        return Arrays.stream(values()).filter(scope -> scope.wireName().equals(name)).findFirst();
    }
}
