package dev.tasklane.notify;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.config.DatabaseUrls;
import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.LoopLifecycle;
import dev.tasklane.support.SerializedSink;
import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.r2dbc.postgresql.api.PostgresqlResult;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The replica's one LISTEN connection and the NOTIFYs it sends: a direct connection outside the
 * pools (a pooled one would hold a slot forever, and PgBouncer in transaction mode cannot carry
 * LISTEN), which reconnects with backoff whenever it breaks.
 *
 * <p>A connection can also stop answering without breaking (a half-open socket, a dropped NAT
 * entry): notifications then simply stop, and wake-ups, cancels and other replicas' events would
 * fall back to polling unnoticed. So the connection is asked {@code SELECT 1} every few seconds
 * with a timeout; one that does not answer is replaced, and everyone who waits on notifications
 * is told to look for what they may have missed ({@link #reconnected()}).
 *
 * <p>NOTIFYs are hints, never the delivery path: they are coalesced (one transaction at a time
 * per replica carries every distinct notice offered meanwhile) and sent with
 * {@code synchronous_commit} off, because a notifying commit holds a database-wide lock and a
 * lost notice costs a poll interval at worst.
 */
@Component
public final class Notifier extends LoopLifecycle {

    private static final Logger log = LoggerFactory.getLogger(Notifier.class);
    private static final Duration CHECK_EVERY = Duration.ofSeconds(3);
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(3);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

    private final ConnectionFactory connections;
    private final Duration statementTimeout;
    private final SerializedSink<Notice> received = new SerializedSink<>();
    private final SerializedSink<Boolean> reconnected = new SerializedSink<>();
    private final AtomicReference<@Nullable PostgresqlConnection> current = new AtomicReference<>();
    private final Batcher<Notice, Void> sender;

    Notifier(@Value("${tasklane.listen-url}") String listenUrl,
             @Value("${spring.r2dbc.url}") String r2dbcUrl,
             @Value("${spring.r2dbc.username:}") String username,
             @Value("${spring.r2dbc.password:}") String password,
             TasklaneProperties properties) {
        ConnectionFactoryOptions parsed = ConnectionFactoryOptions.parse(listenUrl);
        ConnectionFactoryOptions.Builder options = parsed.mutate()
                .option(ConnectionFactoryOptions.CONNECT_TIMEOUT, Duration.ofSeconds(5))
                .option(PostgresqlConnectionFactoryProvider.TCP_KEEPALIVE, true);
        // Credentials set explicitly win; then those of the listen URL itself; then those given
        // only inside the main R2DBC URL (user:password@host), which the derived listen URL omits.
        DatabaseUrls main = DatabaseUrls.parse(r2dbcUrl);
        String user = !username.isEmpty() ? username : main.user();
        String secret = !password.isEmpty() ? password : main.password();
        if (user != null && (!username.isEmpty() || !parsed.hasOption(ConnectionFactoryOptions.USER))) {
            options.option(ConnectionFactoryOptions.USER, user);
        }
        if (secret != null && (!password.isEmpty() || !parsed.hasOption(ConnectionFactoryOptions.PASSWORD))) {
            options.option(ConnectionFactoryOptions.PASSWORD, secret);
        }
        this.connections = ConnectionFactories.get(options.build());
        this.statementTimeout = properties.database().statementTimeout();
        this.sender = Batcher.ofWrites("notify", 1000, 1, this::sendDistinct);
    }

    /** Every notice on a channel, from now on, for as long as the replica runs. */
    public Flux<String> notifications(Channel channel) {
        return received.asFlux().filter(notice -> notice.channel() == channel).map(Notice::payload);
    }

    /**
     * Emits each time the connection is (re)established and listening: notices sent while it was
     * down or deaf are lost, so whoever waits on them looks for what they missed.
     */
    public Flux<Boolean> reconnected() {
        return reconnected.asFlux();
    }

    /** Sends a notice with the next NOTIFY transaction; returns at once (failures are logged). */
    public void notify(Channel channel, String payload) {
        sender.offer(new Notice(channel, payload));
    }

    /** Sends notices now, in one transaction; completes when sent (or known not to be). */
    public Mono<Void> send(Channel channel, List<String> payloads) {
        return sendDistinct(payloads.stream().map(payload -> new Notice(channel, payload)).toList());
    }

    private Mono<Void> sendDistinct(List<Notice> notices) {
        PostgresqlConnection connection = current.get();
        if (connection == null || notices.isEmpty()) {
            return Mono.empty();
        }
        Set<Notice> distinct = new LinkedHashSet<>(notices);
        return connection.createStatement("SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)")
                .bind("$1", distinct.stream().map(notice -> notice.channel().sqlName()).toArray(String[]::new))
                .bind("$2", distinct.stream().map(Notice::payload).toArray(String[]::new))
                .execute()
                .flatMap(PostgresqlResult::getRowsUpdated)
                .then()
                .timeout(statementTimeout)
                .onErrorResume(e -> {
                    log.debug("NOTIFY not sent: {}", e.toString());
                    return Mono.empty();
                });
    }

    private Mono<Void> listenOnce() {
        return Mono.usingWhen(
                Mono.from(connections.create()).cast(PostgresqlConnection.class),
                connection -> {
                    StringBuilder setup = new StringBuilder("SET synchronous_commit = off; ")
                            .append("SET application_name = 'tasklane-listener'");
                    for (Channel channel : Channel.values()) {
                        setup.append("; LISTEN ").append(channel.sqlName());
                    }
                    Flux<Notice> deafness = Flux.interval(CHECK_EVERY, CHECK_EVERY)
                            .onBackpressureDrop()
                            .concatMap(tick -> answers(connection), 1)
                            .thenMany(Flux.empty());
                    return connection.createStatement(setup.toString()).execute()
                            .flatMap(PostgresqlResult::getRowsUpdated).then()
                            .then(backendProcessId(connection))
                            .timeout(statementTimeout)
                            .doOnNext(ownProcessId -> {
                                current.set(connection);
                                log.info("Listening for notifications");
                                reconnected.emit(true);
                            })
                            .flatMapMany(ownProcessId -> Flux.merge(othersNotices(connection, ownProcessId), deafness))
                            .doOnNext(received::emit)
                            .then();
                },
                this::close,
                (connection, error) -> close(connection),
                this::close);
    }

    /**
     * The notices other sessions sent. This replica's own come back to it too, since it sends
     * them on the connection that listens; whatever it announces it has already done here
     * (woken its own pipelines, refreshed its flow limits, triggered its event reader), and
     * hearing it again only sent a second claim after every enqueue.
     */
    private static Flux<Notice> othersNotices(PostgresqlConnection connection, int ownProcessId) {
        return connection.getNotifications()
                .filter(n -> n.getProcessId() != ownProcessId)
                .map(n -> new Notice(Channel.ofSqlName(n.getName()), n.getParameter() == null ? "" : n.getParameter()));
    }

    private static Mono<Integer> backendProcessId(PostgresqlConnection connection) {
        return connection.createStatement("SELECT pg_backend_pid()").execute()
                .flatMap(result -> result.map(row -> row.get(0, Integer.class)))
                .next()
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("no backend process id")));
    }

    /** Completes if the connection answers within the check's timeout; errors (and so replaces it) if not. */
    private Mono<Void> answers(PostgresqlConnection connection) {
        return connection.createStatement("SELECT 1").execute().flatMap(PostgresqlResult::getRowsUpdated).then()
                .timeout(CHECK_TIMEOUT, Mono.error(() -> new IllegalStateException(
                        "the LISTEN connection did not answer within " + CHECK_TIMEOUT.toSeconds() + " s")));
    }

    private Mono<Void> close(PostgresqlConnection connection) {
        current.compareAndSet(connection, null);
        // A connection that stopped answering may not answer its close either.
        return Mono.from(connection.close()).timeout(CLOSE_TIMEOUT).onErrorResume(e -> Mono.empty());
    }

    @Override
    protected Disposable startLoop() {
        return listenOnce()
                .then(Mono.<Void>error(new IllegalStateException("the LISTEN connection closed")))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(5))
                        .doBeforeRetry(signal -> log.warn("LISTEN connection lost ({}); reconnecting",
                                signal.failure().toString())))
                .subscribe();
    }

    /** Starts before and stops after everything that sends or waits for notifications. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 4096;
    }
}
