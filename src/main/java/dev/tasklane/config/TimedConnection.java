package dev.tasklane.config;

import java.time.Duration;

import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.spi.Batch;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionMetadata;
import io.r2dbc.spi.IsolationLevel;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import io.r2dbc.spi.TransactionDefinition;
import io.r2dbc.spi.ValidationDepth;
import io.r2dbc.spi.Wrapped;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A pooled connection whose statements the service times too, and which makes sure a statement
 * it stops waiting for is dead before the caller acts on the timeout.
 *
 * <p>A statement unanswered for {@link DatabaseBounds#clientTimeout()} is cancelled (a cancel
 * request on a connection of its own, which PgBouncer forwards too), and then a probe goes down
 * the same connection: its answer, whatever it is, comes only after the statement has ended. No
 * answer within {@link DatabaseBounds#STOP_GRACE} means the connection stopped answering; it is
 * closed, so that the pool never hands it out again, and the server's own bounds end whatever
 * still runs there. Only then does the statement fail, with {@link StatementAbandonedException}:
 * a claim released after that is released after its statement, never before it.
 *
 * <p>Begin, commit and rollback are timed the same way: a commit on a connection that stopped
 * answering would otherwise hold its caller until TCP keepalive. Behind a pooler each transaction
 * begins by setting the bounds for itself.
 */
final class TimedConnection implements Connection, Wrapped<Connection> {

    private static final Logger log = LoggerFactory.getLogger(TimedConnection.class);
    private static final String PROBE = "SELECT 1";

    private final Connection pooled;
    private final DatabaseBounds bounds;

    TimedConnection(Connection pooled, DatabaseBounds bounds) {
        this.pooled = pooled;
        this.bounds = bounds;
    }

    @Override
    public Statement createStatement(String sql) {
        return new TimedStatement(pooled.createStatement(sql), this);
    }

    /** Runs {@code statement}'s results under the bound; see the class comment for what a timeout does. */
    Flux<Result> timed(Publisher<? extends Result> results) {
        Duration timeout = bounds.clientTimeout();
        return TimedResult.timed(results, timeout,
                () -> stopStatement().then(Mono.error(new StatementAbandonedException(timeout))));
    }

    /** Cancels the statement in flight and waits until it is seen ended, or drops the connection. */
    private Mono<Void> stopStatement() {
        PostgresqlConnection postgres = postgres(pooled);
        Mono<Void> cancel = postgres == null ? Mono.empty()
                : postgres.cancelRequest().timeout(DatabaseBounds.STOP_GRACE)
                        .onErrorResume(e -> {
                            log.debug("Cancel request failed: {}", e.toString());
                            return Mono.empty();
                        });
        Mono<Boolean> answered = Flux.from(pooled.createStatement(PROBE).execute())
                .concatMap(Result::getRowsUpdated)
                .then(Mono.just(true))
                .onErrorReturn(true) // an error is an answer too: the statement before it has ended
                .timeout(DatabaseBounds.STOP_GRACE, Mono.just(false));
        return cancel.then(answered).flatMap(ended -> {
            if (ended || postgres == null) {
                return Mono.empty();
            }
            log.warn("A connection stopped answering: closed it; PostgreSQL's own timeouts end what still runs there");
            return Mono.from(postgres.close()).timeout(DatabaseBounds.STOP_GRACE).onErrorResume(e -> Mono.empty());
        });
    }

    private static @Nullable PostgresqlConnection postgres(Connection connection) {
        Object current = connection;
        for (int depth = 0; depth < 8; depth++) {
            if (current instanceof PostgresqlConnection postgres) {
                return postgres;
            }
            if (!(current instanceof Wrapped<?> wrapped)) {
                return null;
            }
            current = wrapped.unwrap();
        }
        return null;
    }

    @Override
    public Publisher<Void> beginTransaction() {
        return withBounds(pooled.beginTransaction());
    }

    @Override
    public Publisher<Void> beginTransaction(TransactionDefinition definition) {
        return withBounds(pooled.beginTransaction(definition));
    }

    private Publisher<Void> withBounds(Publisher<Void> begin) {
        if (!bounds.pooled()) {
            return timedCommand(begin); // set for the whole session at connect
        }
        return timedCommand(begin).then(Flux.from(createStatement(bounds.transactionSettings()).execute())
                .concatMap(Result::getRowsUpdated)
                .then());
    }

    /** A command of the transaction's (begin, commit, rollback) under the same bound as a statement. */
    private Mono<Void> timedCommand(Publisher<Void> command) {
        Duration timeout = bounds.clientTimeout();
        return Mono.from(command).timeout(timeout,
                Mono.defer(() -> stopStatement().then(Mono.error(new StatementAbandonedException(timeout)))));
    }

    @Override
    public Publisher<Void> close() {
        return pooled.close();
    }

    @Override
    public Publisher<Void> commitTransaction() {
        return timedCommand(pooled.commitTransaction());
    }

    @Override
    public Batch createBatch() {
        return pooled.createBatch();
    }

    @Override
    public Publisher<Void> createSavepoint(String name) {
        return pooled.createSavepoint(name);
    }

    @Override
    public boolean isAutoCommit() {
        return pooled.isAutoCommit();
    }

    @Override
    public ConnectionMetadata getMetadata() {
        return pooled.getMetadata();
    }

    @Override
    public IsolationLevel getTransactionIsolationLevel() {
        return pooled.getTransactionIsolationLevel();
    }

    @Override
    public Publisher<Void> releaseSavepoint(String name) {
        return pooled.releaseSavepoint(name);
    }

    @Override
    public Publisher<Void> rollbackTransaction() {
        return timedCommand(pooled.rollbackTransaction());
    }

    @Override
    public Publisher<Void> rollbackTransactionToSavepoint(String name) {
        return pooled.rollbackTransactionToSavepoint(name);
    }

    @Override
    public Publisher<Void> setAutoCommit(boolean autoCommit) {
        return pooled.setAutoCommit(autoCommit);
    }

    @Override
    public Publisher<Void> setLockWaitTimeout(Duration timeout) {
        return pooled.setLockWaitTimeout(timeout);
    }

    @Override
    public Publisher<Void> setStatementTimeout(Duration timeout) {
        return pooled.setStatementTimeout(timeout);
    }

    @Override
    public Publisher<Void> setTransactionIsolationLevel(IsolationLevel level) {
        return pooled.setTransactionIsolationLevel(level);
    }

    @Override
    public Publisher<Boolean> validate(ValidationDepth depth) {
        return pooled.validate(depth);
    }

    @Override
    public Connection unwrap() {
        return pooled;
    }
}
