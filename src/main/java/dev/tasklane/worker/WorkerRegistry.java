package dev.tasklane.worker;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The {@code worker} table: who is working, seen when. */
@Component
public class WorkerRegistry {

    private final DatabaseClient db;

    WorkerRegistry(DatabaseClient db) {
        this.db = db;
    }

    Mono<Void> heartbeat(String id, List<String> queues, int inFlight) {
        return db.sql(WorkerSql.UPSERT).bind("id", id).bind("kind", "replica")
                .bind("queues", queues.toArray(String[]::new)).bind("inFlight", inFlight)
                .then();
    }

    /** Records that a pull worker called about a queue. */
    public Mono<Void> touchPullWorker(String id, String queue) {
        return db.sql(WorkerSql.TOUCH_PULL).bind("id", id).bind("queue", queue).then();
    }

    public Flux<WorkerInfo> live() {
        return db.sql(WorkerSql.LIST_LIVE)
                .map(row -> new WorkerInfo(
                        Objects.requireNonNull(row.get("id", String.class)),
                        Objects.requireNonNull(row.get("kind", String.class)),
                        Arrays.asList(Objects.requireNonNull(row.get("queues", String[].class))),
                        Objects.requireNonNull(row.get("in_flight", Integer.class)),
                        Objects.requireNonNull(row.get("started_at", Instant.class)),
                        Objects.requireNonNull(row.get("last_seen_at", Instant.class))))
                .all();
    }

    Mono<Long> forgetStale() {
        return db.sql(WorkerSql.DELETE_STALE).fetch().rowsUpdated();
    }

    Mono<Void> forget(String id) {
        return db.sql(WorkerSql.DELETE).bind("id", id).then();
    }
}
