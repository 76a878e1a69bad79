package dev.tasklane.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How long a statement, a lock wait and an idle open transaction of the service's pools may take,
 * kept by PostgreSQL itself and, a margin later, by the service.
 *
 * <p>A bound only the service kept let PostgreSQL go on: a claim the service had given up on
 * (and answered 503 for, and released by its lease id, finding nothing) still committed once
 * the lock it waited for dropped, and its task stayed {@code running} under a lease nobody held.
 * With the bound on the server, a statement that takes too long is ended there and rolled back,
 * and the service hears so first. On a direct connection the three settings go in the startup
 * packet, so they cost no round trip; behind a pooler in transaction mode a session setting
 * would land on whichever server connection happened to run it (and a startup parameter is
 * refused), so each transaction sets them with {@code SET LOCAL} instead, and a statement outside
 * a transaction relies on the service's cancel (see {@link TimedConnection}).
 *
 * @param statementTimeout the bound on a statement, a lock wait and an idle open transaction
 * @param pooled whether the main URL goes through a pooler: the LISTEN URL names another server
 */
public record DatabaseBounds(Duration statementTimeout, boolean pooled) {

    /**
     * How much longer than PostgreSQL the service waits for an answer: a server that keeps its
     * own bound answers first, with an error that says the statement was ended and rolled back.
     */
    static final Duration CLIENT_MARGIN = Duration.ofSeconds(1);

    /** How long the service waits for a statement it cancelled to be seen ended before it drops the connection. */
    static final Duration STOP_GRACE = Duration.ofSeconds(1);

    public DatabaseBounds {
        if (statementTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("the statement timeout must be at least a millisecond");
        }
    }

    /** When the service stops waiting for a statement's first answer. */
    Duration clientTimeout() {
        return statementTimeout.plus(CLIENT_MARGIN);
    }

    /** The settings, by name, with their values in milliseconds. */
    Map<String, String> sessionSettings() {
        String ms = Long.toString(statementTimeout.toMillis());
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("statement_timeout", ms);
        settings.put("lock_timeout", ms);
        settings.put("idle_in_transaction_session_timeout", ms);
        return Map.copyOf(settings);
    }

    /** The settings for one transaction, as one simple query (one round trip). */
    String transactionSettings() {
        StringBuilder sql = new StringBuilder();
        sessionSettings().forEach((name, value) -> sql.append("SET LOCAL ").append(name).append(" = ").append(value).append(';'));
        return sql.toString();
    }
}
