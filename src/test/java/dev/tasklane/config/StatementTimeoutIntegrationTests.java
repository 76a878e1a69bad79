package dev.tasklane.config;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.junit.jupiter.api.Test;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The service's statement timeout covers the whole answer: a statement that waits on a lock
 * fails at the timeout whether the caller reads rows or a count, although the driver hands out
 * the result before the server has answered. (In the shared context only so that the drivers'
 * native parts are loaded before a test's first statement, off the event loops.)
 */
final class StatementTimeoutIntegrationTests extends IntegrationTest {

    @Test
    void aQueryAndAnUpdateWaitingOnALockFailAtTheTimeout() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        ConnectionFactory direct = ConnectionFactories.get(ConnectionFactoryOptions.parse(server.r2dbcUrl()).mutate()
                .option(ConnectionFactoryOptions.USER, server.user())
                .option(ConnectionFactoryOptions.PASSWORD, server.password()).build());
        // One connection, as a busy pool's are: its statements are prepared once and then only bound.
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(direct).maxSize(1).build());
        // Bounds as behind a pooler: none on the server, so the service's own timer and cancel are what is tested.
        DatabaseClient db = DatabaseClients.timed(pool, new DatabaseBounds(Duration.ofMillis(500), true));
        try (Connection locker = server.connect(); Statement statement = locker.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS timeout_probe (n int)");
            StepVerifier.create(query(db)).verifyComplete(); // prepared on the connection: Parse no longer waits
            locker.setAutoCommit(false);
            statement.execute("LOCK TABLE timeout_probe IN ACCESS EXCLUSIVE MODE");

            StepVerifier.create(query(db))
                    .expectError(QueryTimeoutException.class).verify(Duration.ofSeconds(5));
            StepVerifier.create(db.sql("UPDATE timeout_probe SET n = :n").bind("n", 1).fetch().rowsUpdated())
                    .expectError(QueryTimeoutException.class).verify(Duration.ofSeconds(5));
            locker.rollback();
        }
        StepVerifier.create(query(db)).verifyComplete();
        pool.dispose();
    }

    @Test
    void aCommitThatGoesUnansweredFailsAtTheTimeoutAndPostgresRollsTheTransactionBack() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        DatabaseBounds bounds = new DatabaseBounds(Duration.ofSeconds(1), false);
        try (TcpProxy proxy = new TcpProxy(server.host(), server.port());
             Connection reader = server.connect(); Statement statement = reader.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS timeout_probe (n int)");
            ConnectionFactory behindProxy = ConnectionFactories.get(ConnectionFactoryOptions
                    .parse("r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + server.database()).mutate()
                    .option(ConnectionFactoryOptions.USER, server.user())
                    .option(ConnectionFactoryOptions.PASSWORD, server.password())
                    .option(PostgresqlConnectionFactoryProvider.OPTIONS, ConnectionOptions.withSessionBounds(null, bounds))
                    .build());
            ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(behindProxy).maxSize(1).build());
            DatabaseClient db = DatabaseClients.timed(pool, bounds);
            TransactionalOperator transactions = TransactionalOperator.create(
                    new R2dbcTransactionManager(db.getConnectionFactory()));
            try {
                // the COMMIT is held on the way, as by a network that stopped forwarding
                StepVerifier.create(transactions.transactional(db.sql("INSERT INTO timeout_probe (n) VALUES (4242)").then()
                                .then(Mono.fromRunnable(proxy::stallOpen))))
                        .expectError()
                        .verify(Duration.ofSeconds(6));
                Thread.sleep(1_500); // past the server's idle-in-transaction bound
                proxy.restore(); // the held COMMIT now reaches a session PostgreSQL has ended
                Thread.sleep(500);
                try (java.sql.ResultSet row = statement.executeQuery("SELECT count(*) FROM timeout_probe WHERE n = 4242")) {
                    row.next();
                    org.assertj.core.api.Assertions.assertThat(row.getInt(1)).isZero();
                }
            } finally {
                proxy.restore();
                pool.dispose();
            }
        }
    }

    private static reactor.core.publisher.Flux<Object> query(DatabaseClient db) {
        return db.sql("SELECT n FROM timeout_probe WHERE n > :n").bind("n", 0).map(row -> row.get(0)).all();
    }
}
