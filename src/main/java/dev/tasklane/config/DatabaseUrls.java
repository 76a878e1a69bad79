package dev.tasklane.config;

import java.util.ArrayList;
import java.util.List;

import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;
import org.jspecify.annotations.Nullable;

/**
 * Where the database is, read once from the R2DBC URL, and the other URLs derived from it: the
 * JDBC URL Flyway migrates over and the direct (never pooled) URL the LISTEN connection uses.
 *
 * @param host server host
 * @param port server port
 * @param database database name
 * @param sslMode the URL's {@code sslMode} option, if any
 * @param schema the URL's {@code schema} option, if any
 * @param sslRootCert the URL's {@code sslRootCert} option (the CA file that verify-ca and verify-full check against), if any
 * @param user the user named in the URL, if any
 * @param password the password given in the URL, if any
 */
public record DatabaseUrls(String host, int port, String database, @Nullable String sslMode,
                           @Nullable String schema, @Nullable String sslRootCert, @Nullable String user,
                           @Nullable String password) {

    public static final String DEFAULT_R2DBC_URL = "r2dbc:postgresql://localhost:5432/tasklane";

    private static final Option<String> SSL_MODE = Option.valueOf("sslMode");
    private static final Option<String> SCHEMA = Option.valueOf("schema");
    private static final Option<String> SSL_ROOT_CERT = Option.valueOf("sslRootCert");

    /** Parses an {@code r2dbc:[pool:]postgresql://} URL with the R2DBC SPI's own parser. */
    public static DatabaseUrls parse(String r2dbcUrl) {
        ConnectionFactoryOptions options = ConnectionFactoryOptions.parse(r2dbcUrl);
        Object host = options.getValue(ConnectionFactoryOptions.HOST);
        Object port = options.getValue(ConnectionFactoryOptions.PORT);
        Object database = options.getValue(ConnectionFactoryOptions.DATABASE);
        Object user = options.getValue(ConnectionFactoryOptions.USER);
        Object password = options.getValue(ConnectionFactoryOptions.PASSWORD);
        return new DatabaseUrls(host == null ? "localhost" : host.toString(),
                port == null ? 5432 : Integer.parseInt(port.toString()),
                database == null ? "postgres" : database.toString(),
                text(options.getValue(SSL_MODE)), text(options.getValue(SCHEMA)),
                text(options.getValue(SSL_ROOT_CERT)), text(user), text(password));
    }

    private static @Nullable String text(@Nullable Object value) {
        return value == null ? null : value.toString();
    }

    /** The same place with another schema option. */
    public DatabaseUrls withSchema(@Nullable String otherSchema) {
        return new DatabaseUrls(host, port, database, sslMode, otherSchema, sslRootCert, user, password);
    }

    /** Whether {@code other} names the same server (host and port): not when one of them is a pooler in front. */
    public boolean sameServer(DatabaseUrls other) {
        return host.equalsIgnoreCase(other.host) && port == other.port;
    }

    /** The JDBC URL of the same database, for Flyway. */
    public String jdbcUrl() {
        return jdbcUrl(database);
    }

    /** The JDBC URL of another database on the same server (to create ours from). */
    public String jdbcUrl(String otherDatabase) {
        List<String> params = new ArrayList<>();
        if (sslMode != null) {
            params.add("sslmode=" + sslMode.toLowerCase().replace('_', '-'));
        }
        if (sslRootCert != null) {
            params.add("sslrootcert=" + sslRootCert);
        }
        if (schema != null && otherDatabase.equals(database)) {
            params.add("currentSchema=" + schema);
        }
        return "jdbc:postgresql://" + hostPort() + "/" + otherDatabase + query(params);
    }

    /** A direct, unpooled R2DBC URL of the same database, for the LISTEN connection. */
    public String listenUrl() {
        List<String> params = new ArrayList<>();
        if (sslMode != null) {
            params.add("sslMode=" + sslMode);
        }
        if (sslRootCert != null) {
            params.add("sslRootCert=" + sslRootCert);
        }
        if (schema != null) {
            params.add("schema=" + schema);
        }
        return "r2dbc:postgresql://" + hostPort() + "/" + database + query(params);
    }

    @Override
    public String toString() {
        return "DatabaseUrls[" + hostPort() + "/" + database + ", user=" + user + "]";
    }

    private String hostPort() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    private static String query(List<String> params) {
        return params.isEmpty() ? "" : "?" + String.join("&", params);
    }
}
