package dev.tasklane.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.r2dbc.autoconfigure.ConnectionFactoryOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How every pooled connection talks to PostgreSQL, unless the URL says otherwise.
 *
 * <p>Results in binary: in text, every timestamp of every task row is parsed with a date-time
 * formatter, which the profile of a burn-down showed as a fifth of the service's own CPU; in
 * binary it is one long.
 *
 * <p>TCP keepalive: a connection whose peer vanished (a failover to another address, a NAT entry
 * dropped) is closed by the kernel's keepalive probes instead of staying in the pool until its
 * maximum life, every statement on it timing out. The probes' timing is the operating system's
 * ({@code net.ipv4.tcp_keepalive_*}); the statement timeout covers the time before they act.
 *
 * <p>Binary timestamps read as {@code Instant} without the driver's detour ({@link BinaryInstantCodec}).
 *
 * <p>The bounds of {@link DatabaseBounds} as startup parameters of every direct connection
 * ({@code statement_timeout}, {@code lock_timeout}, {@code idle_in_transaction_session_timeout}),
 * where they cost no round trip; a value the URL's {@code options} sets itself wins.
 *
 * <p>Unnamed statements where the LISTEN URL names another server than the main URL, which is how
 * a pooler in front is configured: a pooler in transaction mode before PgBouncer 1.21 hands one
 * server connection to many clients, and the driver's named statements ({@code S_0}, ...) then
 * collide there ("prepared statement already exists"). The URL's own
 * {@code preparedStatementCacheQueries} wins. {@link PoolerProbe} refuses to start behind a
 * pooler configured otherwise.
 */
@Configuration(proxyBeanMethods = false)
class ConnectionOptions {

    @Bean
    ConnectionFactoryOptionsBuilderCustomizer postgresqlConnectionOptions(DatabaseBounds bounds) {
        return options -> {
            if (bounds.pooled()) {
                if (!options.build().hasOption(PostgresqlConnectionFactoryProvider.PREPARED_STATEMENT_CACHE_QUERIES)) {
                    options.option(PostgresqlConnectionFactoryProvider.PREPARED_STATEMENT_CACHE_QUERIES, 0);
                }
            } else {
                options.option(PostgresqlConnectionFactoryProvider.OPTIONS,
                        withSessionBounds(options.build().getValue(PostgresqlConnectionFactoryProvider.OPTIONS), bounds));
            }
            if (!options.build().hasOption(PostgresqlConnectionFactoryProvider.FORCE_BINARY)) {
                options.option(PostgresqlConnectionFactoryProvider.FORCE_BINARY, true);
            }
            if (!options.build().hasOption(PostgresqlConnectionFactoryProvider.TCP_KEEPALIVE)) {
                options.option(PostgresqlConnectionFactoryProvider.TCP_KEEPALIVE, true);
            }
            if (!options.build().hasOption(PostgresqlConnectionFactoryProvider.EXTENSIONS)) {
                options.option(PostgresqlConnectionFactoryProvider.EXTENSIONS, List.of(BinaryInstantCodec.registrar()));
            }
        };
    }

    /** The URL's own options (a map, or {@code key=value;...} as the URL writes them) over the bounds. */
    static Map<String, String> withSessionBounds(@Nullable Object configured, DatabaseBounds bounds) {
        Map<String, String> merged = new LinkedHashMap<>(bounds.sessionSettings());
        if (configured instanceof Map<?, ?> map) {
            map.forEach((key, value) -> merged.put(String.valueOf(key), String.valueOf(value)));
        } else if (configured != null) {
            for (String pair : configured.toString().split(";")) {
                int equals = pair.indexOf('=');
                if (equals > 0) {
                    merged.put(pair.substring(0, equals).strip(), pair.substring(equals + 1).strip());
                }
            }
        }
        return Map.copyOf(merged);
    }
}
