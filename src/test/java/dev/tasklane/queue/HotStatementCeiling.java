package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The service's own hot statements (enqueue, claim, complete, with the event rows they write),
 * bound exactly as {@link TaskStore} binds them, run in tight loops with no service in between:
 * the ceiling the benchmark compares the service with.
 */
public final class HotStatementCeiling implements AutoCloseable {

    /** The types the in-process pipelines claim (their handlers). */
    public static final Set<String> HANDLED_TYPES = Set.of("noop", "sleep", "http");
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final ConnectionPool pool;
    private final DatabaseClient db;
    private final String jdbcUrl;
    private final String user;
    private final String password;

    public HotStatementCeiling(String r2dbcUrl, String jdbcUrl, String user, String password, int connections) {
        ConnectionFactoryOptions options = ConnectionFactoryOptions.parse(r2dbcUrl).mutate()
                .option(ConnectionFactoryOptions.USER, user).option(ConnectionFactoryOptions.PASSWORD, password)
                .option(PostgresqlConnectionFactoryProvider.FORCE_BINARY, true) // as the service asks
                .build();
        this.pool = new ConnectionPool(ConnectionPoolConfiguration.builder(ConnectionFactories.get(options))
                .initialSize(connections).maxSize(connections).build());
        this.db = DatabaseClient.create(pool);
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
    }

    /** Enqueues {@code count} noop tasks in statements of {@code batch}, {@code inFlight} at a time; tasks per second. */
    public double enqueue(String queue, int count, int batch, int inFlight) {
        List<NewTask> tasks = IntStream.range(0, batch).mapToObj(i -> new NewTask("noop", null, 0, null,
                Duration.ZERO, NewTask.DEFAULT_MAX_ATTEMPTS, null, 7200)).toList();
        long started = System.nanoTime();
        Flux.range(0, (count + batch - 1) / batch)
                .flatMap(i -> TaskStore.enqueueStatement(db, queue, tasks.subList(0, Math.min(batch, count - i * batch)))
                        .fetch().all().then(), inFlight)
                .blockLast(Duration.ofMinutes(10));
        return count / seconds(started);
    }

    /**
     * Works the queue off with {@code loops} concurrent claim-then-complete loops, {@code claimBatch}
     * tasks per claim, every outcome of a claim in one complete statement; tasks per second.
     */
    public double process(String queue, int loops, int claimBatch) {
        long started = System.nanoTime();
        long done = Flux.range(0, loops)
                .flatMap(loop -> claimAndComplete(queue, "ceiling-" + loop, claimBatch)
                        .expand(n -> n == 0 ? Mono.empty() : claimAndComplete(queue, "ceiling-" + loop, claimBatch))
                        .reduce(0L, Long::sum), loops)
                .reduce(0L, Long::sum)
                .block(Duration.ofMinutes(10));
        return done / seconds(started);
    }

    private Mono<Long> claimAndComplete(String queue, String workerId, int claimBatch) {
        return TaskStore.claimStatement(db, new Claim(queue, workerId, claimBatch, LEASE, HANDLED_TYPES),
                        ClaimHandoff.newLeaseId())
                .map(TaskStore::toTask).all().collectList()
                .flatMap(claimed -> claimed.isEmpty() ? Mono.just(0L)
                        : TaskStore.completeStatement(db, claimed.stream()
                                        .map(task -> Outcome.success(task, workerId, null)).toList())
                                .fetch().all().count().thenReturn((long) claimed.size()));
    }

    /**
     * How long one claim of {@code claimBatch} takes on {@code queue}, as it stands: each claim
     * runs in a transaction that is rolled back, so every sample sees the same backlog.
     *
     * @return the sample durations, sorted
     */
    public List<Duration> claimLatencies(String queue, int claimBatch, int samples) throws Exception {
        JdbcStatement claim = JdbcStatement.of(TaskSql.CLAIM_OF_TYPES);
        List<Duration> durations = new ArrayList<>();
        try (Connection connection = DriverManager.getConnection(jdbcUrl, user, password)) {
            connection.setAutoCommit(false);
            for (int i = 0; i < samples; i++) {
                try (PreparedStatement statement = claim.prepare(connection, JdbcStatement.claimWithoutFlowControl(
                        Map.of("queue", queue, "types", HANDLED_TYPES.toArray(String[]::new), "limit", claimBatch,
                                "workerId", "ceiling", "leaseId", UUID.randomUUID(), "leaseMs", LEASE.toMillis())))) {
                    long started = System.nanoTime();
                    try (ResultSet rows = statement.executeQuery()) {
                        while (rows.next()) {
                            rows.getLong("id");
                        }
                    }
                    durations.add(Duration.ofNanos(System.nanoTime() - started));
                }
                connection.rollback();
            }
        }
        durations.sort(null);
        return durations;
    }

    @Override
    public void close() {
        pool.dispose();
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }
}
