package dev.tasklane.config;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationStrategy;
import org.springframework.stereotype.Component;

/**
 * Runs the migrations at start, first creating the database when it does not exist yet and the
 * configured user may create it, so that a fresh PostgreSQL needs no manual step.
 *
 * <p>This is plain JDBC on the main thread, before the replica serves anything: the only place
 * the service blocks, and the only one where it should (besides {@link PoolerProbe}, which also runs at start).
 */
@Component
final class DatabaseBootstrap implements FlywayMigrationStrategy {

    private static final Logger log = LoggerFactory.getLogger(DatabaseBootstrap.class);
    private static final String INVALID_CATALOG_NAME = "3D000";

    private final String directUrl;
    private final String user;
    private final String password;

    // The direct URL, as for LISTEN: behind PgBouncer in transaction mode, a database cannot be
    // created through it, and Flyway's session-level lock could be taken on one server connection
    // and released on another.
    DatabaseBootstrap(@Value("${tasklane.listen-url}") String directUrl,
                      @Value("${spring.flyway.user}") String user,
                      @Value("${spring.flyway.password:}") String password) {
        this.directUrl = directUrl;
        this.user = user;
        this.password = password;
    }

    @Override
    public void migrate(Flyway flyway) {
        createDatabaseIfMissing(DatabaseUrls.parse(directUrl));
        flyway.migrate();
    }

    private void createDatabaseIfMissing(DatabaseUrls urls) {
        try (Connection ignored = DriverManager.getConnection(urls.jdbcUrl(), user, password)) {
            return;
        } catch (SQLException e) {
            if (!INVALID_CATALOG_NAME.equals(e.getSQLState())) {
                return; // Flyway reports unreachable servers and bad credentials itself
            }
        }
        try (Connection admin = DriverManager.getConnection(urls.jdbcUrl("postgres"), user, password);
             Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + quoteIdentifier(urls.database()));
            log.info("Created database {}", urls.database());
        } catch (SQLException e) {
            log.warn("Database {} does not exist and could not be created: {}", urls.database(), e.getMessage());
        }
    }

    private static String quoteIdentifier(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }
}
