package dev.tasklane.config;

import java.time.Duration;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.R2dbcTimeoutException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.r2dbc.autoconfigure.ConnectionFactoryOptionsBuilderCustomizer;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The service's two ways into the database, both with a statement timeout: the main pool (Boot's,
 * {@code SPRING_R2DBC_POOL_*}) for the API, the event streams and everything else, and the
 * in-process workers' own small pool ({@link WorkerDatabase}).
 *
 * <p>The timeout is kept by the client, on every statement: a server-side
 * {@code statement_timeout} sent as a startup parameter would be refused by PgBouncer in
 * transaction mode (and, were it ignored there, not apply), and it would not cover a connection
 * that stops answering without closing, which is what the timeout is most for. A statement
 * that times out fails with {@link R2dbcTimeoutException}, a transient error that callers retry
 * or report as 503.
 */
@Configuration(proxyBeanMethods = false)
class DatabaseClients {

    private static final String POOLING_DRIVER = "pool";

    @Bean
    @Primary
    DatabaseClient databaseClient(ConnectionFactory connectionFactory, TasklaneProperties properties) {
        return timed(connectionFactory, properties.database().statementTimeout());
    }

    @Bean
    WorkerDatabase workerDatabase(R2dbcConnectionDetails details,
                                  ObjectProvider<ConnectionFactoryOptionsBuilderCustomizer> customizers,
                                  TasklaneProperties properties) {
        // The URL's own options (sslMode, schema, ...) and credentials, without its pooling:
        // this pool has its own size and timeouts.
        ConnectionFactoryOptions configured = details.getConnectionFactoryOptions();
        ConnectionFactoryOptions.Builder options = configured.mutate();
        if (POOLING_DRIVER.equals(configured.getValue(ConnectionFactoryOptions.DRIVER))) {
            options.option(ConnectionFactoryOptions.DRIVER,
                    configured.getRequiredValue(ConnectionFactoryOptions.PROTOCOL).toString());
        }
        customizers.orderedStream().forEach(customizer -> customizer.customize(options));
        Duration timeout = properties.database().statementTimeout();
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(ConnectionFactories.get(options.build()))
                .name("tasklane-workers")
                .initialSize(0)
                .maxSize(properties.database().workerPoolSize())
                .maxAcquireTime(timeout)
                .maxCreateConnectionTime(Duration.ofSeconds(5))
                .maxIdleTime(Duration.ofMinutes(10))
                .maxLifeTime(Duration.ofMinutes(30))
                .build());
        return new WorkerDatabase(timed(pool, timeout), pool);
    }

    static DatabaseClient timed(ConnectionFactory connectionFactory, Duration timeout) {
        return DatabaseClient.builder()
                .connectionFactory(connectionFactory)
                .executeFunction(statement -> TimedResult.timed(statement.execute(), timeout))
                .build();
    }
}
