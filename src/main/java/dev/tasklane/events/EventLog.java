package dev.tasklane.events;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongFunction;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.notify.Channel;
import dev.tasklane.notify.Notifier;
import dev.tasklane.support.JsonbColumn;
import dev.tasklane.support.LoopLifecycle;
import dev.tasklane.support.SerializedSink;
import io.r2dbc.spi.Readable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The durable event log and this replica's one reader of it.
 *
 * <p>Events are stored a batch per statement and queue (V022); an event's id is its batch's id
 * plus its position. Batch ids come from a sequence in insert order but become visible in commit
 * order: a reader that has seen batch 8193 may find 4097 later. So the reader hands out events
 * only up to a horizon below which nothing can still appear. Every statement that appends events
 * owns a transaction id when it draws the batch id. Each round reads the highest id the batches
 * drawn so far can hold, L, and then takes a transaction id B of its own: every transaction that
 * drew a batch up to L got its transaction id before that, so below B. Once a later round's
 * snapshot has an xmin of B or more, all of them have ended, and every event up to L is in the
 * table or never will be. While anyone is subscribed there is a quicker proof: batch ids follow
 * each other at a fixed step, so once the reader finds every batch from the horizon up to N in the
 * table, nothing can still appear below N, whatever else is still running; only a hole (a batch id
 * drawn by a statement still in flight, rolled back, or that wrote nothing) waits for the proof by
 * xmin.
 *
 * <p>The reader runs when this replica appended events, when a NOTIFY says that events were
 * appended (on any replica), every poll interval while anyone is subscribed, and, while what it
 * has read waits for older transactions to end, again after a few milliseconds. What it reads
 * becomes one shared hot stream. The cost of the rule: a transaction that holds an event id
 * (or, while nobody is subscribed, any transaction) holds the horizon back while it runs.
 */
@Component
public final class EventLog extends LoopLifecycle implements EventSource {

    private static final Logger log = LoggerFactory.getLogger(EventLog.class);

    /** Rows and bytes per page of a replay: a subscriber holds at most about one page at a time. */
    private static final int PAGE = 500;
    private static final int PAGE_BYTES = 256 * 1024;

    /**
     * Rows per read when the reader delivers live events: under load it hands out thousands per
     * round, and each read's round trip waits its turn on busy cores. Bounded in bytes too, since
     * a {@code succeeded} event carries its task's result.
     */
    private static final int LIVE_PAGE = 2000;
    private static final int LIVE_PAGE_BYTES = 4 * 1024 * 1024;
    /** Batches a round looks at to decide how far it may deliver. */
    private static final int LIVE_BATCHES = 1000;

    /** One page as read: its events, and whether more may follow it. */
    private record Page(List<Read> events, boolean more) {
    }

    /** An event as read, with the id of the batch that holds it. */
    private record Read(TaskEvent event, long batch) {
    }

    /** How far apart the sequence draws batch ids (V022). */
    private static final long BATCH_STEP = EventSql.BATCH_SPAN + 1;

    /** An id read from the sequence, waiting for a snapshot that proves it final. */
    private record Pending(long lastId, long bound) {
    }

    /**
     * The least time between two rounds that follow each other at once: under load the reader
     * would otherwise run back to back, and each round with news takes a transaction id.
     */
    private static final Duration ROUND_PACE = Duration.ofMillis(5);

    /**
     * How long the reader keeps asking at {@link #ROUND_PACE} whether what it read has become
     * final: long enough for the statements running meanwhile to end. A transaction that holds
     * the horizon longer is not one of them, and the reader then asks less and less often.
     */
    private static final Duration PROMPT_PROOF = Duration.ofMillis(200);

    private final DatabaseClient db;
    private final Notifier notifier;
    private final Duration poll;
    private final Sinks.Many<LiveEvent> hot = Sinks.many().multicast().directBestEffort();
    private final SerializedSink<Boolean> triggers = new SerializedSink<>();
    private final AtomicInteger subscribers = new AtomicInteger();
    /** Held while a subscription is counted, and while the reader moves the horizon for nobody. */
    private final Object subscriptions = new Object();
    // Confined to the reader's pipeline (one round at a time); volatile for readers of the horizon.
    private final Deque<Pending> pending = new ArrayDeque<>();
    private volatile long delivered = -1;
    private volatile long lastSeen = -1;
    private long lastEmitted = -1;
    // Confined to the reader's pipeline: the batch that holds the event at the horizon (for a
    // horizon proven by xmin, the batch that ends there), for the quick proof of the next round.
    private long deliveredBatch = Long.MIN_VALUE;
    // Confined to the reader's pipeline: since when (nanoTime) it has only been waiting for what
    // it read to become final; -1 when it is not.
    private long waitingSince = -1;

    EventLog(DatabaseClient db, Notifier notifier, TasklaneProperties properties) {
        this.db = db;
        this.notifier = notifier;
        this.poll = properties.events().pollInterval();
    }

    /**
     * Every event from now on, in id order, as this replica's reader delivers them. A subscriber
     * without demand misses events (the stream never waits for anyone); {@link LiveEvent#previousId()}
     * lets it notice.
     */
    @Override
    public Flux<LiveEvent> live() {
        return hot.asFlux()
                .doOnSubscribe(s -> {
                    // before the subscriber reads the horizon: see the reader's move without subscribers
                    synchronized (subscriptions) {
                        subscribers.incrementAndGet();
                    }
                })
                .doFinally(s -> subscribers.decrementAndGet());
    }

    /** The id up to which every event has been delivered on {@link #live()}; -1 before the first round. */
    public long delivered() {
        return delivered;
    }

    @Override
    public long knownStart() {
        long horizon = delivered;
        return horizon >= 0 ? horizon : lastSeen;
    }

    @Override
    public Mono<Long> lastAssigned() {
        return db.sql(EventSql.LAST_ASSIGNED)
                .map(row -> Objects.requireNonNull(row.get("last_id", Long.class)))
                .one();
    }

    /** Waits until the reader has established a horizon (it has after its first rounds). */
    @Override
    public Mono<Long> horizon() {
        return Mono.defer(() -> delivered >= 0 ? Mono.just(delivered)
                : Mono.delay(Duration.ofMillis(10)).then(horizon()));
    }

    /**
     * Call after a statement appended events and NOTIFYed the other replicas at its commit:
     * wakes this reader at once.
     */
    public void appendedAndNotified() {
        trigger();
    }

    /**
     * Call after a statement appended events without a NOTIFY of its own: wakes this reader at
     * once and the others by the notifier's next (coalesced) NOTIFY.
     */
    public void appended() {
        trigger();
        notifier.notify(Channel.EVENTS, "");
    }

    /** Events in (after, upTo] that {@code filter} wants, in id order, read from the table a page at a time. */
    @Override
    public Flux<TaskEvent> range(long after, long upTo, EventFilter filter) {
        return range(after, upTo, filter, PAGE, PAGE_BYTES);
    }

    private Flux<TaskEvent> range(long after, long upTo, EventFilter filter, int pageSize, int pageBytes) {
        return read(after, upTo, filter, pageSize, pageBytes).map(Read::event);
    }

    private Flux<Read> read(long after, long upTo, EventFilter filter, int pageSize, int pageBytes) {
        if (after >= upTo) {
            return Flux.empty();
        }
        String[] names = filter.names().toArray(String[]::new);
        return paged(after, pageSize, cursor -> (filter.queue() == null ? db.sql(EventSql.RANGE)
                : db.sql(EventSql.RANGE_OF_QUEUE).bind("queue", filter.queue()))
                .bind("after", cursor).bind("upTo", upTo).bind("names", names)
                .bind("limit", pageSize).bind("maxBytes", pageBytes));
    }

    /** One task's events after {@code after}, in id order, from the table. */
    @Override
    public Flux<TaskEvent> ofTask(long taskId, long after) {
        return paged(after, PAGE, cursor -> db.sql(EventSql.OF_TASK)
                .bind("taskId", taskId).bind("after", cursor).bind("limit", PAGE).bind("maxBytes", PAGE_BYTES))
                .map(Read::event);
    }

    /**
     * Events after {@code after}, a page at a time: {@code page} binds a statement that reads
     * the page (at most {@code limit} rows) after a cursor. A page in hand, the next read on demand.
     */
    private static Flux<Read> paged(long after, int limit, LongFunction<DatabaseClient.GenericExecuteSpec> page) {
        // More may follow a page that reached the row limit, or that the byte limit cut short.
        Function<Long, Mono<Page>> read = cursor -> page.apply(cursor)
                .map(row -> Map.entry(new Read(toEvent(row), Objects.requireNonNull(row.get("batch", Long.class))),
                        Objects.requireNonNull(row.get("page_rows", Long.class))))
                .all()
                .collectList()
                .map(rows -> new Page(rows.stream().map(Map.Entry::getKey).toList(),
                        !rows.isEmpty() && (rows.get(0).getValue() >= limit || rows.size() < rows.get(0).getValue())));
        return read.apply(after)
                .expand(current -> current.more() ? read.apply(current.events().get(current.events().size() - 1).event().id())
                        : Mono.empty())
                .flatMapIterable(Page::events, 1);
    }

    /** The id of a task's last event; 0 when it has none. */
    public Mono<Long> lastOfTask(long taskId) {
        return db.sql(EventSql.LAST_OF_TASK).bind("taskId", taskId)
                .map(row -> {
                    Long id = row.get("last_id", Long.class);
                    return id == null ? 0L : id;
                })
                .one()
                .defaultIfEmpty(0L);
    }

    /** The highest event id retention has deleted; 0 when it has deleted none. */
    @Override
    public Mono<Long> prunedThrough() {
        return db.sql(EventSql.PRUNED_THROUGH)
                .map(row -> Objects.requireNonNull(row.get("pruned_through", Long.class)))
                .one()
                .defaultIfEmpty(0L);
    }

    /**
     * Events the reader has seen handed out but not yet proven final and delivered: how far the
     * live stream trails the log (it waits for transactions that may still hold smaller ids).
     */
    @Override
    public long horizonLag() {
        long seen = lastSeen;
        long done = delivered;
        return seen < 0 || done < 0 ? 0 : Math.max(0, seen - done);
    }

    /** How many subscribers the live stream has now. */
    @Override
    public int subscribers() {
        return subscribers.get();
    }

    private void trigger() {
        triggers.emit(true);
    }

    /**
     * One round: reads the sequence, a snapshot and a bound above every transaction that may
     * hold an event id up to what it read; delivers every event proven final. Emits how long to
     * wait before the next round, or nothing when no round is needed until the next wake-up.
     */
    private Mono<Duration> round() {
        return horizonRound().flatMap(progressed -> {
            forgetDelivered(); // only after a round that succeeded: a failed one leaves its proof to the next
            if (progressed || pending.isEmpty()) {
                waitingSince = -1;
                return progressed ? Mono.just(ROUND_PACE) : Mono.empty();
            }
            // Only waiting for older transactions to end: ask again soon rather than at the next
            // wake-up (under load, the next commit's NOTIFY, tens of milliseconds away). Once a
            // transaction has held the horizon for a while, ask after as long again as it has held
            // it (up to the poll interval): few rounds, and delivery late by at most about that much.
            long now = System.nanoTime();
            if (waitingSince < 0) {
                waitingSince = now;
            }
            Duration waited = Duration.ofNanos(now - waitingSince);
            if (waited.compareTo(PROMPT_PROOF) < 0) {
                return Mono.just(ROUND_PACE);
            }
            return Mono.just(waited.compareTo(poll) < 0 ? waited : poll);
        });
    }

    /**
     * The work of a round; emits whether it made progress (read something new, which a later
     * round proves final, or moved the horizon).
     */
    private Mono<Boolean> horizonRound() {
        return db.sql(EventSql.HORIZON)
                .bind("lastSeen", lastSeen)
                .map(row -> {
                    Long bound = row.get("bound", Long.class);
                    return new long[] {
                            Objects.requireNonNull(row.get("last_id", Long.class)),
                            Objects.requireNonNull(row.get("xmin", Long.class)),
                            bound == null ? -1 : bound};
                })
                .one()
                .flatMap(horizon -> {
                    long lastId = horizon[0];
                    long xmin = horizon[1];
                    long bound = horizon[2];
                    // Read, not taken: an entry leaves once the horizon covers it (see round()).
                    long proven = -1;
                    for (Pending read : pending) {
                        if (read.bound() > xmin) {
                            break;
                        }
                        proven = read.lastId();
                    }
                    boolean readNews = lastId > lastSeen && bound >= 0;
                    if (readNews) {
                        lastSeen = lastId;
                        pending.addLast(new Pending(lastId, bound));
                    }
                    if (delivered < 0) {
                        if (proven >= 0) {
                            delivered = proven; // the live stream starts here
                            deliveredBatch = proven - EventSql.BATCH_SPAN;
                            lastEmitted = proven;
                        }
                        return Mono.just(readNews);
                    }
                    // Nobody follows the live stream: move the horizon by the proof alone, without
                    // reading the rows; whoever subscribes later replays from the table up to it. The
                    // check and the move are one step against a subscription (see live()): a stream
                    // that subscribed in between and read the old horizon would otherwise never be
                    // sent what lies between the two until some later event showed it the break.
                    synchronized (subscriptions) {
                        if (subscribers.get() == 0) {
                            if (proven <= delivered) {
                                return Mono.just(readNews);
                            }
                            lastEmitted = proven;
                            delivered = proven;
                            deliveredBatch = proven - EventSql.BATCH_SPAN;
                            return Mono.just(true);
                        }
                    }
                    return deliverFinal(Math.max(delivered, proven)).map(moved -> moved || readNews);
                });
    }

    /** Drops what the horizon now covers from what waits for proof. */
    private void forgetDelivered() {
        while (!pending.isEmpty() && pending.peekFirst().lastId() <= delivered) {
            pending.pollFirst();
        }
    }

    /**
     * Hands out, in id order, every event up to {@code proven} and after it every event whose
     * batch follows the last one handed out: the rest of the batch at the horizon (a batch row is
     * written whole), the batch drawn next, or, right after a proven bound (the last id the
     * batches drawn so far can hold), the one whose first id follows it. Batch ids follow each
     * other at a fixed step, so once every batch up to N is in the table none can still appear
     * below N, whatever transactions are still open. Only a hole waits for the proof of older
     * transactions' end. Which batches follow each other it decides from their ids and sizes
     * first, and then reads the events of those only: reading everything after the horizon and
     * stopping at the hole read the events after a hole again every round, thousands of them while
     * a long statement held its batch id. Emits whether the horizon moved.
     */
    private Mono<Boolean> deliverFinal(long proven) {
        long from = delivered;
        return db.sql(EventSql.BATCHES_AFTER).bind("after", from).bind("upTo", lastSeen).bind("limit", LIVE_BATCHES)
                .map(row -> new long[] {Objects.requireNonNull(row.get("first_id", Long.class)),
                        Objects.requireNonNull(row.get("size", Integer.class))})
                .all()
                .collectList()
                .flatMap(batches -> {
                    long end = Math.max(from, proven);
                    long endBatch = end > from ? end - EventSql.BATCH_SPAN : deliveredBatch;
                    for (long[] batch : batches) {
                        long first = batch[0];
                        long last = first + batch[1] - 1;
                        if (last <= end) {
                            endBatch = Math.max(endBatch, first);
                        } else if (first == endBatch || first == end + 1 || first == endBatch + BATCH_STEP) {
                            end = last;
                            endBatch = first;
                        } else {
                            break;
                        }
                    }
                    long upTo = end;
                    long upToBatch = endBatch;
                    return read(from, upTo, EventFilter.ALL, LIVE_PAGE, LIVE_PAGE_BYTES)
                            .doOnNext(this::emit)
                            .then(Mono.fromSupplier(() -> {
                                delivered = upTo;
                                deliveredBatch = upToBatch;
                                return upTo > from;
                            }));
                });
    }

    /** Hands one final event out on the live stream. */
    private void emit(Read read) {
        TaskEvent event = read.event();
        // The horizon covers an event before it is emitted: a subscriber that joins the live
        // stream too late for it then reads a horizon that includes it and replays it. A round
        // that fails part-way leaves both at this event, where the next round goes on.
        delivered = event.id();
        deliveredBatch = read.batch();
        // The chain moves past an event before it is emitted: if the emission fails part-way (a
        // subscriber throws, the frame cannot be built), the subscribers it did not reach see the
        // next event linked to this one, a break, and catch up from the table, instead of a next
        // event linked to the one they had and this one lost unseen.
        long previous = lastEmitted;
        lastEmitted = event.id();
        hot.emitNext(new LiveEvent(event, SseFrames.of(event), previous),
                Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(50)));
    }

    @Override
    protected Disposable startLoop() {
        pending.clear();
        delivered = -1;
        deliveredBatch = Long.MIN_VALUE;
        lastSeen = -1;
        Flux<Boolean> wakes = Flux.merge(
                Flux.just(true, true),
                triggers.asFlux(),
                notifier.notifications(Channel.EVENTS).map(n -> true),
                notifier.reconnected(),
                Flux.interval(poll).onBackpressureDrop().filter(tick -> subscribers.get() > 0 || delivered < 0 || !pending.isEmpty())
                        .map(tick -> true));
        return wakes
                .onBackpressureLatest()
                // deferred: a round that throws before it returns its Mono fails that wake alone
                .concatMap(wake -> Mono.defer(this::round)
                        .expand(pace -> round().delaySubscription(pace))
                        .then()
                        .onErrorResume(e -> {
                            log.warn("Reading the event log failed: {}", e.toString());
                            return Mono.empty();
                        }), 1)
                .subscribe();
    }

    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 2048;
    }

    static TaskEvent toEvent(Readable row) {
        return new TaskEvent(
                Objects.requireNonNull(row.get("id", Long.class)),
                Objects.requireNonNull(row.get("task_id", Long.class)),
                Objects.requireNonNull(row.get("queue", String.class)),
                Objects.requireNonNull(row.get("task_type", String.class)),
                row.get("concurrency_key", String.class),
                row.get("schedule", String.class),
                row.get("scheduled_for", Instant.class),
                Objects.requireNonNull(row.get("name", String.class)),
                Objects.requireNonNull(row.get("state", String.class)),
                Objects.requireNonNull(row.get("attempt", Integer.class)),
                Objects.requireNonNull(row.get("at", Instant.class)),
                Objects.requireNonNullElse(JsonbColumn.text(row, "detail"), "{}"));
    }
}
