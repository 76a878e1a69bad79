package dev.tasklane.queue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.support.PeriodicJob;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * {@code tasklane_queue_depth{queue,state}} and {@code tasklane_queue_oldest_age_seconds{queue}},
 * read by one query on a timer rather than per scrape. They describe the whole database, so
 * every replica reports the same values: aggregate them with {@code max by (queue)}, not sum.
 * A queue that empties reports zeros rather than vanishing, so graphs and alerts see it drain.
 * <p>
 * The read counts every waiting task from the claim index, so behind a large backlog it still
 * reads for a while (about 0.2 s per million waiting tasks, see {@link QueueSql#DEPTH}). It runs
 * without parallel workers: with them it took every core of the database at once, every interval
 * on every replica, and the pickups of that moment waited for a core (idle pickup p99 behind a
 * million delayed tasks, measured: 15-18 ms with them, 8.5 ms without).
 */
@Component
final class QueueDepthMetrics extends PeriodicJob {

    /** What one read found for one queue. */
    private record Depth(long queued, long running, double oldestAgeSeconds) {

        static final Depth EMPTY = new Depth(0, 0, 0);
    }

    private final DatabaseClient db;
    private final TransactionalOperator transactions;
    private final QueueFlows flows;
    private final MultiGauge depth;
    private final MultiGauge oldestAge;
    private final MultiGauge heldBack;
    private final MultiGauge limit;
    // Replaced whole by each read, which runs one at a time; the gauges read it at scrape time.
    private volatile Map<String, Depth> depths;
    private volatile Map<String, QueueStats.HeldBack> held = Map.of();

    QueueDepthMetrics(DatabaseClient db, TransactionalOperator transactions, QueueFlows flows, MeterRegistry meters,
            TasklaneProperties properties) {
        super("Reading queue depth", Duration.ZERO, properties.metrics().depthInterval());
        this.db = db;
        this.transactions = transactions;
        this.flows = flows;
        // Queues worked here are reported from the start, even while they have never had a task.
        this.depths = properties.worker().queues().stream().map(spec -> spec.split(":", 2)[0].strip())
                .distinct().collect(Collectors.toUnmodifiableMap(queue -> queue, queue -> Depth.EMPTY));
        this.depth = MultiGauge.builder("tasklane.queue.depth").description("Tasks waiting or running, per queue")
                .register(meters);
        this.oldestAge = MultiGauge.builder("tasklane.queue.oldest.age").baseUnit("seconds")
                .description("How long the longest-waiting due task of a queue has waited").register(meters);
        this.heldBack = MultiGauge.builder("tasklane.queue.held.back")
                .description("Due tasks a queue's flow control holds back now, by the limit that holds them")
                .register(meters);
        this.limit = MultiGauge.builder("tasklane.queue.limit")
                .description("A queue's flow-control settings (rates as count and period in seconds)").register(meters);
    }

    @Override
    protected Mono<Map<String, Depth>> runOnce() {
        return withDepthPlanning(db, transactions, read());
    }

    /** Runs {@code work} in a transaction planned as {@link QueueSql#DEPTH_PLANNING} says. */
    static <T> Mono<T> withDepthPlanning(DatabaseClient db, TransactionalOperator transactions, Mono<T> work) {
        return transactions.transactional(db.sql(QueueSql.DEPTH_PLANNING).then().then(work));
    }

    private Mono<Map<String, Depth>> read() {
        return db.sql(QueueSql.DEPTH)
                .map(row -> Map.entry(Objects.requireNonNull(row.get("queue", String.class)), new Depth(
                        Objects.requireNonNull(row.get("queued", Long.class)),
                        Objects.requireNonNull(row.get("running", Long.class)),
                        Objects.requireNonNull(row.get("oldest_age_seconds", Double.class)))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .doOnNext(this::publish)
                .flatMap(published -> db.sql(QueueSql.HELD_BACK).bind("queue", Parameter.empty(String.class))
                        .map(row -> Map.entry(Objects.requireNonNull(row.get("name", String.class)),
                                new QueueStats.HeldBack(Objects.requireNonNull(row.get("max_running", Long.class)),
                                        Objects.requireNonNull(row.get("max_running_per_key", Long.class)),
                                        Objects.requireNonNull(row.get("rate", Long.class)))))
                        .all()
                        .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                        .doOnNext(this::publishFlow)
                        .thenReturn(published));
    }

    /** Held-back counts of the flow-controlled queues, and the settings of every one as last read. */
    private void publishFlow(Map<String, QueueStats.HeldBack> read) {
        held = Map.copyOf(read);
        heldBack.register(read.keySet().stream().flatMap(queue -> Stream.of(
                MultiGauge.Row.of(Tags.of("queue", queue, "reason", "maxRunning"), this,
                        self -> self.heldOf(queue).maxRunning()),
                MultiGauge.Row.of(Tags.of("queue", queue, "reason", "maxRunningPerKey"), this,
                        self -> self.heldOf(queue).maxRunningPerKey()),
                MultiGauge.Row.of(Tags.of("queue", queue, "reason", "rate"), this, self -> self.heldOf(queue).rate())
        )).toList(), true);
        List<MultiGauge.Row<?>> limits = new ArrayList<>();
        flows.all().forEach((queue, settings) -> {
            addLimit(limits, queue, "maxRunning", settings.maxRunning());
            addLimit(limits, queue, "maxRunningPerKey", settings.maxRunningPerKey());
            if (settings.rate() != null) {
                addLimit(limits, queue, "rateCount", settings.rate().count());
                addLimit(limits, queue, "ratePeriodSeconds", settings.rate().periodSeconds());
            }
            if (settings.ratePerKey() != null) {
                addLimit(limits, queue, "ratePerKeyCount", settings.ratePerKey().count());
                addLimit(limits, queue, "ratePerKeyPeriodSeconds", settings.ratePerKey().periodSeconds());
            }
        });
        limit.register(limits, true);
    }

    private static void addLimit(List<MultiGauge.Row<?>> rows, String queue, String name, @Nullable Integer value) {
        if (value != null) {
            rows.add(MultiGauge.Row.of(Tags.of("queue", queue, "limit", name), value));
        }
    }

    private QueueStats.HeldBack heldOf(String queue) {
        return held.getOrDefault(queue, QueueStats.HeldBack.NONE);
    }

    private void publish(Map<String, Depth> read) {
        Map<String, Depth> next = new HashMap<>();
        depths.keySet().forEach(queue -> next.put(queue, Depth.EMPTY));
        next.putAll(read);
        depths = Map.copyOf(next);
        depth.register(next.keySet().stream().flatMap(queue -> List.of(
                MultiGauge.Row.of(Tags.of("queue", queue, "state", "queued"), this, self -> self.of(queue).queued()),
                MultiGauge.Row.of(Tags.of("queue", queue, "state", "running"), this, self -> self.of(queue).running())
        ).stream()).toList(), true);
        oldestAge.register(next.keySet().stream().map(queue ->
                MultiGauge.Row.of(Tags.of("queue", queue), this, self -> self.of(queue).oldestAgeSeconds())).toList(), true);
    }

    private Depth of(String queue) {
        return depths.getOrDefault(queue, Depth.EMPTY);
    }
}
