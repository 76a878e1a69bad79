package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.tasklane.queue.FlowLimits.Rate;
import dev.tasklane.queue.QueueStats.HeldBack;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Queue-level state: the pause flag, the flow control and the counts. The overview of all queues
 * is computed at most once per {@link #OVERVIEW_MAX_AGE} on each replica, however often it is
 * asked for.
 */
@Component
public class QueueStore {

    static final Duration OVERVIEW_MAX_AGE = Duration.ofSeconds(5);

    private final DatabaseClient db;
    private final TaskChanges changes;
    private final QueueFlows flows;
    private final Mono<List<QueueStats>> cachedOverview;

    QueueStore(DatabaseClient db, TaskChanges changes, QueueFlows flows) {
        this.db = db;
        this.changes = changes;
        this.flows = flows;
        this.cachedOverview = overview(null).cache(stats -> OVERVIEW_MAX_AGE, error -> Duration.ZERO,
                () -> Duration.ZERO);
    }

    /** Every queue that has tasks or a row of its own (paused, resumed, flow control); may lag up to five seconds. */
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

    /**
     * Applies a patch to a queue's flow control (creating its row), tells every replica, and
     * answers the queue with its fresh counts.
     */
    public Mono<QueueStats> patchFlow(String queue, FlowPatch patch) {
        return db.sql(QueueSql.PATCH_FLOW)
                .bind("queue", queue)
                .bind("setMaxRunning", patch.maxRunning().given())
                .bind("maxRunning", Parameter.fromOrEmpty(patch.maxRunning().value(), Integer.class))
                .bind("setMaxRunningPerKey", patch.maxRunningPerKey().given())
                .bind("maxRunningPerKey", Parameter.fromOrEmpty(patch.maxRunningPerKey().value(), Integer.class))
                .bind("setRate", patch.rate().given())
                .bind("rateCount", Parameter.fromOrEmpty(count(patch.rate().value()), Integer.class))
                .bind("ratePeriodSeconds", Parameter.fromOrEmpty(period(patch.rate().value()), Integer.class))
                .bind("setRatePerKey", patch.ratePerKey().given())
                .bind("ratePerKeyCount", Parameter.fromOrEmpty(count(patch.ratePerKey().value()), Integer.class))
                .bind("ratePerKeyPeriodSeconds", Parameter.fromOrEmpty(period(patch.ratePerKey().value()),
                        Integer.class))
                .bind("setFairness", patch.fairness().given())
                .bind("fairness", Parameter.fromOrEmpty(patch.fairness().value() == null ? null
                        : patch.fairness().value().wireName(), String.class))
                .then()
                .then(flows.changed(queue))
                .then(one(queue));
    }

    /** Deletes up to {@code limit} rows of rate bookkeeping that no window can see any more; emits how many. */
    public Mono<Long> pruneClaimStarts(int limit) {
        return db.sql(QueueSql.PRUNE_CLAIM_STARTS).bind("limit", limit).fetch().rowsUpdated();
    }

    private Mono<List<QueueStats>> overview(@Nullable String queue) {
        Mono<Map<String, HeldBack>> heldBack = db.sql(QueueSql.HELD_BACK)
                .bind("queue", Parameter.fromOrEmpty(queue, String.class))
                .map(row -> Map.entry(Objects.requireNonNull(row.get("name", String.class)), new HeldBack(
                        count(row, "max_running"), count(row, "max_running_per_key"), count(row, "rate"))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
        return db.sql(QueueSql.OVERVIEW).bind("queue", Parameter.fromOrEmpty(queue, String.class))
                .map(QueueStore::toStats).all().collectList()
                .zipWith(heldBack, (stats, held) -> stats.stream()
                        .map(s -> s.withHeldBack(held.getOrDefault(s.name(), HeldBack.NONE))).toList());
    }

    private static QueueStats toStats(Readable row) {
        return new QueueStats(Objects.requireNonNull(row.get("name", String.class)),
                count(row, "queued"), count(row, "running"), count(row, "succeeded"), count(row, "failed"),
                count(row, "cancelled"), row.get("oldest_age_seconds", Double.class),
                Boolean.TRUE.equals(row.get("paused", Boolean.class)), QueueFlows.limitsOf(row), HeldBack.NONE);
    }

    private static long count(Readable row, String column) {
        return Objects.requireNonNull(row.get(column, Long.class));
    }

    private static @Nullable Integer count(@Nullable Rate rate) {
        return rate == null ? null : rate.count();
    }

    private static @Nullable Integer period(@Nullable Rate rate) {
        return rate == null ? null : rate.periodSeconds();
    }
}
