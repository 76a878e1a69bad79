package dev.tasklane.testsupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import org.flywaydb.core.Flyway;
import org.postgresql.Driver;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The one PostgreSQL database of this test JVM, fresh for the run. In order of preference:
 * <ol>
 *   <li>{@code TEST_DATABASE_URL}: a JDBC URL of a server where the tests may create databases
 *       (user and password as URL parameters or in {@code TEST_DATABASE_USER}/{@code _PASSWORD});</li>
 *   <li>Testcontainers ({@code postgres:17-alpine}) where Docker runs, unless
 *       {@code TESTCONTAINERS_ENABLED=false};</li>
 *   <li>the server on {@code PGHOST}:{@code PGPORT} (default 127.0.0.1:5432) as {@code PGUSER}
 *       (default postgres) with {@code PGPASSWORD}.</li>
 * </ol>
 * On a server the tests create {@code tasklane_test_<random>} and drop it when the JVM exits.
 * With none reachable, every integration test fails with a message saying how to provide one;
 * none is skipped.
 */
public final class TestDatabase {

    private static Coordinates coordinates;
    private static IllegalStateException failure;

    private TestDatabase() {
    }

    /**
     * Where the database is.
     *
     * @param host host
     * @param port port
     * @param database database name
     * @param user user
     * @param password password
     */
    public record Coordinates(String host, int port, String database, String user, String password) {

        public String r2dbcUrl() {
            return "r2dbc:postgresql://" + host + ":" + port + "/" + database;
        }

        public String jdbcUrl() {
            return jdbcUrl(database);
        }

        public String jdbcUrl(String otherDatabase) {
            return "jdbc:postgresql://" + host + ":" + port + "/" + otherDatabase;
        }

        /** A plain JDBC connection for test set-up and inspection (never on a reactive thread). */
        public Connection connect() throws SQLException {
            return DriverManager.getConnection(jdbcUrl(), user, password);
        }

        @Override
        public String toString() {
            return host + ":" + port + "/" + database + " as " + user;
        }
    }

    public static synchronized Coordinates get() {
        if (coordinates == null && failure == null) {
            try {
                Coordinates provided = provide();
                // Migrated up front, so that tests without an application context find the schema.
                Flyway.configure().dataSource(provided.jdbcUrl(), provided.user(), provided.password())
                        .locations("classpath:db/migration")
                        .configuration(Map.of("flyway.postgresql.transactional.lock", "false")).load().migrate();
                coordinates = provided;
            } catch (RuntimeException e) {
                failure = new IllegalStateException(e.getMessage(), e);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return coordinates;
    }

    private static Coordinates provide() {
        String url = System.getenv("TEST_DATABASE_URL");
        if (url != null && !url.isBlank()) {
            Properties parsed = Driver.parseURL(url, null);
            if (parsed == null) {
                throw new IllegalStateException("TEST_DATABASE_URL is not a PostgreSQL JDBC URL: "
                        + "use jdbc:postgresql://HOST:PORT/postgres?user=USER&password=PASSWORD");
            }
            return createDatabase(parsed.getProperty("PGHOST", "localhost").split(",")[0],
                    Integer.parseInt(parsed.getProperty("PGPORT", "5432").split(",")[0]),
                    parsed.getProperty("PGDBNAME", "postgres"),
                    firstSet(System.getenv("TEST_DATABASE_USER"), parsed.getProperty("user"), "postgres"),
                    firstSet(System.getenv("TEST_DATABASE_PASSWORD"), parsed.getProperty("password"), ""),
                    "TEST_DATABASE_URL");
        }
        if (!"false".equalsIgnoreCase(System.getenv("TESTCONTAINERS_ENABLED")) && dockerAvailable()) {
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-postgres"));
            return new Coordinates(container.getHost(), container.getMappedPort(5432),
                    container.getDatabaseName(), container.getUsername(), container.getPassword());
        }
        return createDatabase(firstSet(System.getenv("PGHOST"), "127.0.0.1"),
                Integer.parseInt(firstSet(System.getenv("PGPORT"), "5432")), "postgres",
                firstSet(System.getenv("PGUSER"), "postgres"), firstSet(System.getenv("PGPASSWORD"), ""),
                "the local server");
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Coordinates createDatabase(String host, int port, String adminDatabase, String user,
                                              String password, String origin) {
        String name = "tasklane_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)
                .toLowerCase(Locale.ROOT);
        Coordinates admin = new Coordinates(host, port, adminDatabase, user, password);
        try (Connection connection = DriverManager.getConnection(admin.jdbcUrl(), user, password);
             Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("No PostgreSQL for the tests: " + origin + " (" + admin + ") said: "
                    + e.getMessage() + ". Provide one of: TEST_DATABASE_URL=jdbc:postgresql://HOST:5432/postgres"
                    + "?user=USER&password=PASSWORD (a server where the tests may create databases); a running"
                    + " Docker engine (Testcontainers starts postgres:17-alpine); or PostgreSQL on 127.0.0.1:5432"
                    + " with user postgres (PGHOST, PGPORT, PGUSER, PGPASSWORD override these).", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> drop(admin, name), "drop-test-database"));
        return new Coordinates(host, port, name, user, password);
    }

    private static void drop(Coordinates admin, String name) {
        try (Connection connection = DriverManager.getConnection(admin.jdbcUrl(), admin.user(), admin.password());
             Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } catch (SQLException e) {
            System.err.println("Could not drop test database " + name + ": " + e.getMessage());
        }
    }

    private static String firstSet(String... values) {
        for (String value : values) {
            if (value != null && !value.isEmpty()) {
                return value;
            }
        }
        return "";
    }
}
