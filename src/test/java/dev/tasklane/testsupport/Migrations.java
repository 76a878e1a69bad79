package dev.tasklane.testsupport;

import java.util.Map;
import java.util.Properties;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationVersion;

/** For upgrade tests: the service's migrations on a database of the test's own, and a stand-in for an old replica. */
public final class Migrations {

    private Migrations() {
    }

    /** Flyway over the service's migrations, up to {@code target} (a version such as "22"), or all when null. */
    public static Flyway flyway(String jdbcUrl, TestDatabase.Coordinates server, String target) {
        var configuration = Flyway.configure().dataSource(jdbcUrl, server.user(), server.password())
                .locations("classpath:db/migration")
                .configuration(Map.of("flyway.postgresql.transactional.lock", "false"));
        if (target != null) {
            configuration.target(MigrationVersion.fromVersion(target));
        }
        return configuration.load();
    }

    /** Connection properties that make a connection look like a replica's event listener, as the version fences look for. */
    public static Properties listener(TestDatabase.Coordinates server) {
        Properties properties = new Properties();
        properties.setProperty("user", server.user());
        if (server.password() != null) {
            properties.setProperty("password", server.password());
        }
        properties.setProperty("ApplicationName", "tasklane-listener");
        return properties;
    }
}
