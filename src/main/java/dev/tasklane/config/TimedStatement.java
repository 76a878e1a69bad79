package dev.tasklane.config;

import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import reactor.core.publisher.Flux;

/** A statement of a {@link TimedConnection}: its results are timed by the connection. */
final class TimedStatement implements Statement {

    private final Statement statement;
    private final TimedConnection connection;

    TimedStatement(Statement statement, TimedConnection connection) {
        this.statement = statement;
        this.connection = connection;
    }

    @Override
    public Statement add() {
        statement.add();
        return this;
    }

    @Override
    public Statement bind(int index, Object value) {
        statement.bind(index, value);
        return this;
    }

    @Override
    public Statement bind(String name, Object value) {
        statement.bind(name, value);
        return this;
    }

    @Override
    public Statement bindNull(int index, Class<?> type) {
        statement.bindNull(index, type);
        return this;
    }

    @Override
    public Statement bindNull(String name, Class<?> type) {
        statement.bindNull(name, type);
        return this;
    }

    @Override
    public Statement returnGeneratedValues(String... columns) {
        statement.returnGeneratedValues(columns);
        return this;
    }

    @Override
    public Statement fetchSize(int rows) {
        statement.fetchSize(rows);
        return this;
    }

    @Override
    public Flux<Result> execute() {
        return connection.timed(statement.execute());
    }
}
