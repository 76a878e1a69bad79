package dev.tasklane.config;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Finds out at start whether the main URL reaches PostgreSQL through a pooler in transaction
 * mode, where what a connection sets for its session does not stay with it: one connection sets
 * a marker for its session, a second one opens a transaction (which pins a server connection,
 * the one just released if the pooler hands out the last one first, as PgBouncer does) and
 * reads the marker, and the first one reads it again. On a connection of its own each sees only
 * what it set; behind such a pooler the second sees the first's marker, or the first has lost
 * it. Before that, PgBouncer refuses the {@code options} startup parameter the probe sends
 * (unless configured to ignore it). A pooler that neither shows (one that hands out server connections in another order)
 * fails later, in the ways the README's PgBouncer section names.
 *
 * <p>Plain JDBC, like the migrations it runs before: on the main thread, before the replica
 * serves anything.
 */
final class PoolerProbe {

    private static final String SETTING = "tasklane.pooler_probe";
    private static final String SECONDS = "10";

    private PoolerProbe() {
    }

    /** What the probe found of the main URL. */
    enum Verdict {
        /** Two connections share their sessions: a pooler in transaction (or statement) mode. */
        SHARED,
        /** Each connection keeps its own session. */
        OWN,
        /** The database could not be reached (not created yet, say): no verdict. */
        UNKNOWN
    }

    /** Whether two connections to {@code jdbcUrl} share their sessions. */
    static Verdict probe(String jdbcUrl, String user, String password) {
        try {
            return sessionsShared(jdbcUrl, user, password) ? Verdict.SHARED : Verdict.OWN;
        } catch (SQLException e) {
            return refusedAtConnect(e) ? Verdict.SHARED : Verdict.UNKNOWN;
        }
    }

    private static boolean sessionsShared(String jdbcUrl, String user, String password) throws SQLException {
        Properties login = new Properties();
        login.setProperty("user", user);
        login.setProperty("password", password);
        login.setProperty("connectTimeout", SECONDS);
        login.setProperty("socketTimeout", SECONDS);
        // A startup parameter that PostgreSQL takes and PgBouncer refuses unless told to ignore it:
        // the one sure sign, where the order of its server connections may hide the shared sessions.
        login.setProperty("options", "-c lock_timeout=" + SECONDS + "s");
        String marker = Long.toHexString(ThreadLocalRandom.current().nextLong());
        try (Connection first = DriverManager.getConnection(jdbcUrl, login);
             Connection second = DriverManager.getConnection(jdbcUrl, login)) {
            read(first, "SELECT set_config('" + SETTING + "', '" + marker + "', false)");
            second.setAutoCommit(false);
            String seenBySecond = read(second, "SELECT current_setting('" + SETTING + "', true)");
            String seenByFirst = read(first, "SELECT current_setting('" + SETTING + "', true)");
            second.rollback();
            return marker.equals(seenBySecond) || !marker.equals(seenByFirst);
        }
    }

    private static String read(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
            return row.next() ? Objects.requireNonNullElse(row.getString(1), "") : "";
        }
    }

    /**
     * Whether connecting failed because the pooler refused a startup parameter it does not know
     * (PgBouncer: "unsupported startup parameter", here {@code options} or the JDBC driver's {@code extra_float_digits}):
     * a pooler announcing itself.
     */
    private static boolean refusedAtConnect(Throwable failure) {
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
