package dev.tasklane.config;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import dev.tasklane.testsupport.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class DatabaseBootstrapIntegrationTests {

    @Test
    void aMissingDatabaseIsCreatedAndMigrated() throws SQLException {
        TestDatabase.Coordinates server = TestDatabase.get();
        String name = "tasklane_boot_" + UUID.randomUUID().toString().substring(0, 8);
        String r2dbcUrl = "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + name;
        DatabaseUrls urls = DatabaseUrls.parse(r2dbcUrl);
        try {
            Flyway flyway = Flyway.configure().dataSource(urls.jdbcUrl(), server.user(), server.password())
                    .locations("classpath:db/migration")
                    .configuration(java.util.Map.of("flyway.postgresql.transactional.lock", "false")).load();
            new DatabaseBootstrap(r2dbcUrl, server.user(), server.password()).migrate(flyway);
            try (Connection connection = DriverManager.getConnection(urls.jdbcUrl(), server.user(), server.password());
                 Statement statement = connection.createStatement();
                 ResultSet tables = statement.executeQuery("SELECT string_agg(tablename, ',' ORDER BY tablename)"
                         + " FROM pg_tables WHERE tablename IN ('task', 'task_event_batch', 'queue', 'worker')")) {
                tables.next();
                assertThat(tables.getString(1)).isEqualTo("queue,task,task_event_batch,worker");
            }
        } finally {
            try (Connection admin = DriverManager.getConnection(urls.jdbcUrl(server.database()), server.user(),
                    server.password()); Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            }
        }
    }
}
