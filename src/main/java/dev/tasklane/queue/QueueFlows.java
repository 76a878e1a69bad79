package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.tasklane.notify.Channel;
import dev.tasklane.notify.Notifier;
import dev.tasklane.queue.FlowLimits.Fairness;
import dev.tasklane.queue.FlowLimits.Rate;
import dev.tasklane.support.PeriodicJob;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Which queues have flow control, as this replica last read it: claims on those run under the
 * queue's lock ({@link TaskStore}), and the end of a task there wakes the claimers waiting for a
 * slot ({@link TaskChanges}). Read at start, when any replica changes a queue's settings (NOTIFY),
 * when the LISTEN connection comes back, and every few seconds besides.
 *
 * <p>A stale view never breaks a limit: the claim statement of queues without flow control refuses
 * a queue that has it, so a claim sent on an old view takes nothing, and a queue that changed is
 * woken as soon as the view catches up.
 */
@Component
public final class QueueFlows extends PeriodicJob {

    static final Duration REFRESH_INTERVAL = Duration.ofSeconds(2);

    private final DatabaseClient db;
    private final Notifier notifier;
    private final Wakeups wakeups;
    // Replaced whole by each read; read by every claim.
    private volatile Map<String, FlowLimits> controlled = Map.of();

    QueueFlows(DatabaseClient db, Notifier notifier, Wakeups wakeups) {
        super("Reading flow control", Duration.ZERO, REFRESH_INTERVAL);
        this.db = db;
        this.notifier = notifier;
        this.wakeups = wakeups;
    }

    /** The queue's flow control as last read; {@link FlowLimits#NONE} when it has none. */
    public FlowLimits of(String queue) {
        return controlled.getOrDefault(queue, FlowLimits.NONE);
    }

    /** Every queue with flow control, as last read. */
    public Map<String, FlowLimits> all() {
        return controlled;
    }

    boolean controlled(String queue) {
        return controlled.containsKey(queue);
    }

    /** Tells every replica that a queue's flow control changed, and reads it again here now. */
    Mono<Void> changed(String queue) {
        return notifier.send(Channel.FLOW, List.of(queue)).then(refresh());
    }

    @Override
    protected Mono<Void> runOnce() {
        return refresh();
    }

    @Override
    protected Disposable startLoop() {
        Disposable loop = super.startLoop();
        Disposable onChange = Flux.merge(notifier.notifications(Channel.FLOW).map(queue -> true),
                        notifier.reconnected())
                .onBackpressureLatest()
                .concatMap(signal -> refresh().onErrorResume(e -> Mono.empty()), 1)
                .subscribe();
        return Disposables.composite(loop, onChange);
    }

    Mono<Void> refresh() {
        return db.sql(QueueSql.FLOWS)
                .map(row -> Map.entry(Objects.requireNonNull(row.get("name", String.class)), limitsOf(row)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .doOnNext(this::replace)
                .then();
    }

    private synchronized void replace(Map<String, FlowLimits> read) {
        Map<String, FlowLimits> before = controlled;
        controlled = Map.copyOf(read);
        // A queue whose settings changed may have claimers waiting on the old ones: wake them.
        Stream.concat(before.keySet().stream(), read.keySet().stream())
                .filter(queue -> !Objects.equals(before.get(queue), read.get(queue)))
                .collect(Collectors.toUnmodifiableSet())
                .forEach(queue -> wakeups.wake(queue, null));
    }

    static FlowLimits limitsOf(Readable row) {
        Fairness fairness = Fairness.ofWireName(Objects.requireNonNull(row.get("fairness", String.class)));
        return new FlowLimits(row.get("max_running", Integer.class), row.get("max_running_per_key", Integer.class),
                rate(row.get("rate_count", Integer.class), row.get("rate_period_seconds", Integer.class)),
                rate(row.get("rate_per_key_count", Integer.class), row.get("rate_per_key_period_seconds", Integer.class)),
                fairness == null ? Fairness.FIFO : fairness);
    }

    private static @Nullable Rate rate(@Nullable Integer count, @Nullable Integer periodSeconds) {
        return count == null || periodSeconds == null ? null : new Rate(count, periodSeconds);
    }
}
