package dev.tasklane.config;

import io.r2dbc.pool.ConnectionPool;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * The in-process workers' own small pool: lease renewals, recorded outcomes, claims, releases
 * and the rescuer run here, so that API and event-stream load, which share the main pool, can
 * never make them wait for a connection. A renewal that waits too long is a handler stopped and
 * its task run again; an outcome that waits holds its slot.
 *
 * @param client statements on this pool, each with the statement timeout
 * @param pool the pool itself, closed with the application
 */
public record WorkerDatabase(DatabaseClient client, ConnectionPool pool) implements AutoCloseable {

    @Override
    public void close() {
        pool.dispose();
    }
}
