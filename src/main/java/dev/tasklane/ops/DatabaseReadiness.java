package dev.tasklane.ops;

import java.time.Duration;

import dev.tasklane.support.PeriodicJob;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Whether this replica can reach the database now, for the readiness probe (the {@code database}
 * member of the readiness group; liveness never looks at it, so an outage does not make
 * Kubernetes restart every replica). A check runs every second with a short timeout and the
 * probe reads its last answer, so a probe never waits on the database itself.
 */
@Component("database")
final class DatabaseReadiness extends PeriodicJob implements HealthIndicator {

    private static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final DatabaseClient db;
    // Written only by the check, one at a time; read by probes.
    private volatile boolean reachable = true;

    DatabaseReadiness(DatabaseClient db) {
        super("Database check", INTERVAL);
        this.db = db;
    }

    @Override
    protected Mono<Boolean> runOnce() {
        return db.sql("SELECT 1").fetch().rowsUpdated().thenReturn(true)
                .timeout(TIMEOUT)
                .onErrorReturn(false)
                .doOnNext(ok -> reachable = ok);
    }

    @Override
    public Health health() {
        return reachable ? Health.up().build() : Health.down().withDetail("reason", "database unreachable").build();
    }
}
