package dev.tasklane.config;

import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.Wrapped;
import reactor.core.publisher.Mono;

/** Hands out {@link TimedConnection}s of a pool: the service's only way to its statements. */
final class TimedConnectionFactory implements ConnectionFactory, Wrapped<ConnectionFactory> {

    private final ConnectionFactory pool;
    private final DatabaseBounds bounds;

    TimedConnectionFactory(ConnectionFactory pool, DatabaseBounds bounds) {
        this.pool = pool;
        this.bounds = bounds;
    }

    @Override
    public Mono<TimedConnection> create() {
        return Mono.from(pool.create()).map(connection -> new TimedConnection(connection, bounds));
    }

    @Override
    public ConnectionFactoryMetadata getMetadata() {
        return pool.getMetadata();
    }

    @Override
    public ConnectionFactory unwrap() {
        return pool;
    }
}
