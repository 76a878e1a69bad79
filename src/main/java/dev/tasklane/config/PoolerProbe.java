package dev.tasklane.config;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Finds out at start whether the main URL reaches PostgreSQL through a pooler in transaction
 * mode, where what a connection sets for its session does not stay with it: one connection sets
 * a marker for its session, a second one opens a transaction (which pins a server connection,
 * the one just released if the pooler hands out the last one first, as PgBouncer does) and
 * reads the marker, and the first one reads it again. On a connection of its own each sees only
 * what it set; behind such a pooler the second sees the first's marker, or the first has lost
 * it. A pooler that this does not show (one that hands out server connections in another order)
 * fails later, in the ways the README's PgBouncer section names.
 */
final class PoolerProbe {

    private static final String SETTING = "tasklane.pooler_probe";
    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private PoolerProbe() {
    }

    /** Whether connections of {@code connections} share their sessions; empty when it cannot tell. */
    static Mono<Boolean> sessionsShared(ConnectionFactory connections) {
        String marker = Long.toHexString(ThreadLocalRandom.current().nextLong());
        return Mono.usingWhen(connections.create(), first -> Mono.usingWhen(connections.create(), second ->
                        read(first, "SELECT set_config('" + SETTING + "', '" + marker + "', false)")
                                .then(Mono.from(second.beginTransaction()))
                                .then(read(second, "SELECT current_setting('" + SETTING + "', true)"))
                                .flatMap(seenBySecond -> read(first, "SELECT current_setting('" + SETTING + "', true)")
                                        .map(seenByFirst -> marker.equals(seenBySecond) || !marker.equals(seenByFirst)))
                                .flatMap(shared -> Mono.from(second.rollbackTransaction()).thenReturn(shared)),
                        Connection::close), Connection::close)
                .timeout(PATIENCE);
    }

    private static Mono<String> read(Connection connection, String sql) {
        return Flux.from(connection.createStatement(sql).execute())
                .concatMap(result -> result.map(row -> Objects.requireNonNullElse(row.get(0, String.class), "")))
                .next()
                .defaultIfEmpty("");
    }

    /**
     * Whether connecting failed because the bounds sent at connect were refused: PgBouncer refuses
     * startup parameters it does not know ("unsupported startup parameter"), a pooler announcing itself.
     */
    static boolean refusedBoundsAtConnect(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (String.valueOf(cause.getMessage()).contains("unsupported startup parameter")) {
                return true;
            }
        }
        return false;
    }

    /** Why the service refuses to start behind a pooler without a direct URL beside it. */
    static String refusal() {
        return "SPRING_R2DBC_URL reaches PostgreSQL through a pooler in transaction mode (PgBouncer, say), and"
                + " TASKLANE_LISTEN_URL does not name a direct URL of another address beside it: LISTEN, migrations"
                + " and named prepared statements cannot go through such a pooler. Set TASKLANE_LISTEN_URL to a direct"
                + " URL of the same database, and add preparedStatementCacheQueries=0 to SPRING_R2DBC_URL (tasklane"
                + " sets it by itself once TASKLANE_LISTEN_URL names another server).";
    }
}
