package dev.tasklane.queue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.support.PeriodicJob;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * {@code tasklane_queue_depth{queue,state}} and {@code tasklane_queue_oldest_age_seconds{queue}},
 * read by one query on a timer rather than per scrape. They describe the whole database, so
 * every replica reports the same values: aggregate them with {@code max by (queue)}, not sum.
 * A queue that empties reports zeros rather than vanishing, so graphs and alerts see it drain.
 */
@Component
final class QueueDepthMetrics extends PeriodicJob {

    /** What one read found for one queue. */
    private record Depth(long queued, long running, double oldestAgeSeconds) {

        static final Depth EMPTY = new Depth(0, 0, 0);
    }

    private final DatabaseClient db;
    private final MultiGauge depth;
    private final MultiGauge oldestAge;
    // Replaced whole by each read, which runs one at a time; the gauges read it at scrape time.
    private volatile Map<String, Depth> depths;

    QueueDepthMetrics(DatabaseClient db, MeterRegistry meters, TasklaneProperties properties) {
        super("Reading queue depth", Duration.ZERO, properties.metrics().depthInterval());
        this.db = db;
        // Queues worked here are reported from the start, even while they have never had a task.
        this.depths = properties.worker().queues().stream().map(spec -> spec.split(":", 2)[0].strip())
                .distinct().collect(Collectors.toUnmodifiableMap(queue -> queue, queue -> Depth.EMPTY));
        this.depth = MultiGauge.builder("tasklane.queue.depth").description("Tasks waiting or running, per queue")
                .register(meters);
        this.oldestAge = MultiGauge.builder("tasklane.queue.oldest.age").baseUnit("seconds")
                .description("How long the longest-waiting due task of a queue has waited").register(meters);
    }

    @Override
    protected Mono<Map<String, Depth>> runOnce() {
        return db.sql(QueueSql.DEPTH)
                .map(row -> Map.entry(Objects.requireNonNull(row.get("queue", String.class)), new Depth(
                        Objects.requireNonNull(row.get("queued", Long.class)),
                        Objects.requireNonNull(row.get("running", Long.class)),
                        Objects.requireNonNull(row.get("oldest_age_seconds", Double.class)))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .doOnNext(this::publish);
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
