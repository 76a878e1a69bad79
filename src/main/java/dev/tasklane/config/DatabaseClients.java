package dev.tasklane.config;

import java.time.Duration;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.springframework.beans.factory.annotation.Value;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.r2dbc.autoconfigure.ConnectionFactoryOptionsBuilderCustomizer;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.ReactiveTransactionManager;

/**
 * The service's two ways into the database, both bounded ({@link DatabaseBounds}): the main pool
 * (Boot's, {@code SPRING_R2DBC_POOL_*}) for the API, the event streams and everything else, and
 * the in-process workers' own small pool ({@link WorkerDatabase}).
 *
 * <p>PostgreSQL keeps the bounds ({@link ConnectionOptions} sets them on each connection, or each
 * transaction sets them behind a pooler), and the service keeps them too, a margin later: a
 * connection that stops answering without closing is what its own timer is for. A statement the
 * service stopped waiting for fails with {@link StatementAbandonedException}, once it is sure the
 * statement has ended or its connection is closed; callers retry it or report it as 503.
 */
@Configuration(proxyBeanMethods = false)
class DatabaseClients {

    private static final Logger log = LoggerFactory.getLogger(DatabaseClients.class);

    private static final String POOLING_DRIVER = "pool";

    /**
     * The bounds, and whether the main URL goes through a pooler: the LISTEN URL naming another
     * address says so, and {@link PoolerProbe} checks it at start. A pooler the configuration does
     * not name stops the start with what to set; another address that turns out to be the server
     * itself (a second name for it) is taken as direct.
     */
    @Bean
    DatabaseBounds databaseBounds(TasklaneProperties properties, @Value("${spring.r2dbc.url}") String mainUrl,
                                  @Value("${tasklane.listen-url}") String listenUrl,
                                  @Value("${spring.flyway.user}") String user,
                                  @Value("${spring.flyway.password:}") String password) {
        boolean namedApart = !DatabaseUrls.parse(mainUrl).sameServer(DatabaseUrls.parse(listenUrl));
        PoolerProbe.Verdict verdict = PoolerProbe.probe(DatabaseUrls.parse(mainUrl).jdbcUrl(), user, password);
        if (!namedApart && verdict == PoolerProbe.Verdict.SHARED) {
            throw new IllegalStateException(PoolerProbe.refusal());
        }
        boolean pooled = namedApart && verdict != PoolerProbe.Verdict.OWN;
        if (pooled) {
            log.info("Taking SPRING_R2DBC_URL for a pooler in transaction mode (TASKLANE_LISTEN_URL names another server):"
                    + " bounds set by each transaction, claims in transactions, unnamed statements");
        } else if (namedApart) {
            log.warn("TASKLANE_LISTEN_URL names another address than SPRING_R2DBC_URL, but the main URL keeps its sessions:"
                    + " taking it for a direct connection to the same server");
        }
        return new DatabaseBounds(properties.database().statementTimeout(), pooled);
    }

    @Bean
    @Primary
    DatabaseClient databaseClient(ConnectionFactory connectionFactory, DatabaseBounds bounds) {
        return timed(connectionFactory, bounds);
    }

    /**
     * Transactions over the same connections as the statements: Boot's own manager would take
     * the bare pool, whose connections the timed client never sees, so a statement of the client
     * would run outside the transaction it was written for.
     */
    @Bean
    ReactiveTransactionManager transactionManager(DatabaseClient databaseClient) {
        return new R2dbcTransactionManager(databaseClient.getConnectionFactory());
    }

    @Bean
    WorkerDatabase workerDatabase(R2dbcConnectionDetails details,
                                  ObjectProvider<ConnectionFactoryOptionsBuilderCustomizer> customizers,
                                  TasklaneProperties properties, DatabaseBounds bounds) {
        // The URL's own options (sslMode, schema, ...) and credentials, without its pooling:
        // this pool has its own size and timeouts.
        ConnectionFactoryOptions configured = details.getConnectionFactoryOptions();
        ConnectionFactoryOptions.Builder options = configured.mutate();
        if (POOLING_DRIVER.equals(configured.getValue(ConnectionFactoryOptions.DRIVER))) {
            options.option(ConnectionFactoryOptions.DRIVER,
                    configured.getRequiredValue(ConnectionFactoryOptions.PROTOCOL).toString());
        }
        customizers.orderedStream().forEach(customizer -> customizer.customize(options));
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(ConnectionFactories.get(options.build()))
                .name("tasklane-workers")
                .initialSize(0)
                .maxSize(properties.database().workerPoolSize())
                .maxAcquireTime(bounds.statementTimeout())
                .maxCreateConnectionTime(Duration.ofSeconds(5))
                .maxIdleTime(Duration.ofMinutes(10))
                .maxLifeTime(Duration.ofMinutes(30))
                .build());
        return new WorkerDatabase(timed(pool, bounds), pool);
    }

    static DatabaseClient timed(ConnectionFactory connectionFactory, DatabaseBounds bounds) {
        return DatabaseClient.builder()
                .connectionFactory(new TimedConnectionFactory(connectionFactory, bounds))
                .build();
    }
}
