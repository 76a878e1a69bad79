package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Queue-level state: the pause flag and the counts. The overview of all queues is computed at
 * most once per {@link #OVERVIEW_MAX_AGE} on each replica, however often it is asked for.
 */
@Component
public class QueueStore {

    static final Duration OVERVIEW_MAX_AGE = Duration.ofSeconds(5);

    private final DatabaseClient db;
    private final TaskChanges changes;
    private final Mono<List<QueueStats>> cachedOverview;

    QueueStore(DatabaseClient db, TaskChanges changes) {
        this.db = db;
        this.changes = changes;
        this.cachedOverview = overview(null).cache(stats -> OVERVIEW_MAX_AGE, error -> Duration.ZERO,
                () -> Duration.ZERO);
    }

    /** Every queue that has tasks or was paused or resumed; may lag up to five seconds. */
    public Mono<List<QueueStats>> all() {
        return cachedOverview;
    }

    /** One queue, counted now. */
    public Mono<QueueStats> one(String queue) {
        return overview(queue).map(stats -> stats.isEmpty() ? QueueStats.empty(queue) : stats.get(0));
    }

    /** Pauses or resumes a queue (creating its row); answers its fresh counts. */
    public Mono<QueueStats> setPaused(String queue, boolean paused) {
        return db.sql(QueueSql.SET_PAUSED).bind("queue", queue).bind("paused", paused).then()
                .doOnSuccess(done -> {
                    if (!paused) {
                        changes.resumed(queue);
                    }
                })
                .then(one(queue));
    }

    private Mono<List<QueueStats>> overview(@Nullable String queue) {
        return db.sql(QueueSql.OVERVIEW).bind("queue", Parameter.fromOrEmpty(queue, String.class))
                .map(QueueStore::toStats).all().collectList();
    }

    private static QueueStats toStats(Readable row) {
        return new QueueStats(Objects.requireNonNull(row.get("name", String.class)),
                count(row, "queued"), count(row, "running"), count(row, "succeeded"), count(row, "failed"),
                count(row, "cancelled"), row.get("oldest_age_seconds", Double.class),
                Boolean.TRUE.equals(row.get("paused", Boolean.class)));
    }

    private static long count(Readable row, String column) {
        return Objects.requireNonNull(row.get(column, Long.class));
    }
}
