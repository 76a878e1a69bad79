package dev.tasklane.config;

import java.util.List;

import io.r2dbc.postgresql.PostgresqlConnectionFactoryProvider;
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
 */
@Configuration(proxyBeanMethods = false)
class ConnectionOptions {

    @Bean
    ConnectionFactoryOptionsBuilderCustomizer postgresqlConnectionOptions() {
        return options -> {
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
}
