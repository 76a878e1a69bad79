package dev.tasklane.events;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.support.LoopLifecycle;
import dev.tasklane.support.SerializedSink;
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
 * The replica's one LISTEN connection: a direct connection outside the pool (a pooled one
 * would hold a slot forever, and PgBouncer in transaction mode cannot carry LISTEN), which
 * reconnects with backoff whenever it breaks. Notifications are shared as one hot stream.
 *
 * <p>The same connection sends the service's NOTIFYs, with {@code synchronous_commit} off: a
 * notifying commit holds a database-wide lock, and a notification is only a hint that a
 * lost one costs a poll interval at worst, so it need not wait for a WAL flush under that lock.
 */
@Component
public final class NotificationListener extends LoopLifecycle {

    /** Tasks became due on a queue; payload {@code queue} or {@code queue@epochMillis}. */
    public static final String WAKE_CHANNEL = "tasklane_wake";
    /** A running task was cancelled; payload its id. */
    public static final String CANCEL_CHANNEL = "tasklane_cancel";
    /** Events were appended on some replica; payload empty. */
    public static final String EVENTS_CHANNEL = "tasklane_events";

    private static final Logger log = LoggerFactory.getLogger(NotificationListener.class);
    private static final List<String> CHANNELS = List.of(WAKE_CHANNEL, CANCEL_CHANNEL, EVENTS_CHANNEL);

    private final ConnectionFactory connections;
    private final SerializedSink<Notification> notifications = new SerializedSink<>();
    private final SerializedSink<Boolean> connected = new SerializedSink<>();
    private final AtomicReference<@Nullable PostgresqlConnection> current = new AtomicReference<>();
    private volatile @Nullable Disposable loop;

    NotificationListener(@Value("${tasklane.listen-url}") String listenUrl,
                         @Value("${spring.r2dbc.username:}") String username,
                         @Value("${spring.r2dbc.password:}") String password) {
        ConnectionFactoryOptions.Builder options = ConnectionFactoryOptions.parse(listenUrl).mutate()
                .option(ConnectionFactoryOptions.CONNECT_TIMEOUT, Duration.ofSeconds(5));
        if (!username.isEmpty()) {
            options.option(ConnectionFactoryOptions.USER, username);
        }
        if (!password.isEmpty()) {
            options.option(ConnectionFactoryOptions.PASSWORD, password);
        }
        this.connections = ConnectionFactories.get(options.build());
    }

    /** Every notification on a channel, from now on, for as long as the replica runs. */
    public Flux<Notification> notifications(String channel) {
        return notifications.asFlux().filter(n -> n.channel().equals(channel));
    }

    /**
     * Emits each time the connection is (re)established and listening: notifications sent while
     * it was down are lost, so subscribers catch up by other means.
     */
    public Flux<Boolean> connected() {
        return connected.asFlux();
    }

    /** Sends one NOTIFY per payload in one transaction; does nothing while disconnected. */
    public Mono<Void> send(String channel, List<String> payloads) {
        PostgresqlConnection connection = current.get();
        if (connection == null || payloads.isEmpty()) {
            return Mono.empty();
        }
        return connection.createStatement("SELECT pg_notify($1, p) FROM unnest($2::text[]) p")
                .bind("$1", channel).bind("$2", payloads.toArray(String[]::new))
                .execute()
                .flatMap(PostgresqlResult::getRowsUpdated)
                .then()
                .onErrorResume(e -> {
                    log.debug("NOTIFY {} not sent: {}", channel, e.toString());
                    return Mono.empty();
                });
    }

    private Mono<Void> listenOnce() {
        return Mono.usingWhen(
                Mono.from(connections.create()).cast(PostgresqlConnection.class),
                connection -> {
                    String setup = "SET synchronous_commit = off; SET application_name = 'tasklane-listener'; "
                            + String.join("; ", CHANNELS.stream().map(c -> "LISTEN " + c).toList());
                    Flux<Notification> received = connection.getNotifications()
                            .map(n -> new Notification(n.getName(), n.getParameter() == null ? "" : n.getParameter()));
                    return connection.createStatement(setup).execute().flatMap(PostgresqlResult::getRowsUpdated).then()
                            .then(Mono.fromRunnable(() -> {
                                current.set(connection);
                                log.info("Listening for notifications");
                                connected.emit(true);
                            }))
                            .thenMany(received)
                            .doOnNext(notifications::emit)
                            .then();
                },
                connection -> {
                    current.compareAndSet(connection, null);
                    return connection.close();
                },
                (connection, error) -> {
                    current.compareAndSet(connection, null);
                    return connection.close().onErrorResume(e -> Mono.empty());
                },
                connection -> {
                    current.compareAndSet(connection, null);
                    return connection.close();
                });
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
