package dev.tasklane.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.IntStream;

import dev.tasklane.config.DatabaseBounds;
import dev.tasklane.config.WorkerDatabase;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.JsonbColumn;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The only code that runs SQL on the {@code task} table. Each write hands the rows it changed to
 * {@link TaskChanges}, which does what every write needs (metrics, wake-ups, the event nudge).
 *
 * <p>Two instances share the statements: this one on the main pool, which the API and the event
 * streams also use, and {@link #onWorkerPool()} on the in-process workers' own small pool, so
 * that no burst of requests can starve lease renewals, outcomes and claims (a renewal that waits
 * for a connection is a handler stopped and run again).
 */
@Component
public class TaskStore {

    /**
     * How often an enqueue retries the keys whose task vanished between the insert that found
     * the key taken and the read of that task (deleted or pruned meanwhile).
     */
    private static final int MAX_KEY_RACE_ROUNDS = 5;

    /**
     * Single enqueues in flight at once: requests arriving meanwhile share the next statement.
     * Two, so that one statement's round trip overlaps the next one's.
     */
    private static final int SINGLE_ENQUEUES_IN_FLIGHT = 2;

    /** Ids per statement of a bulk action: one short transaction each. */
    static final int BULK_BATCH = 1000;

    /** About how many bytes of payloads and results one page of the task list may hold. */
    static final int PAGE_BYTES = 4 * 1024 * 1024;

    private final DatabaseClient db;
    private final TransactionalOperator transactions;
    private final TaskChanges changes;
    private final QueueFlows flows;
    private final Batcher<Single, Attempt> singles;
    private final GuardedEnqueues guarded;
    private final TaskStore onWorkerPool;
    /**
     * Behind a pooler a statement outside a transaction has no bound on the server (the bounds
     * travel with each transaction there): a claim then runs in one, so that a claim the service
     * gave up on cannot commit after it was released.
     */
    private final boolean claimsInTransactions;

    @Autowired
    TaskStore(DatabaseClient db, WorkerDatabase workerDatabase, TaskChanges changes, QueueFlows flows,
              DatabaseBounds bounds) {
        this(db, changes, flows, bounds.pooled(),
                new TaskStore(workerDatabase.client(), changes, flows, bounds.pooled(), null));
    }

    private TaskStore(DatabaseClient db, TaskChanges changes, QueueFlows flows, boolean claimsInTransactions,
                      @Nullable TaskStore onWorkerPool) {
        this.db = db;
        this.claimsInTransactions = claimsInTransactions;
        this.transactions = TransactionalOperator.create(new R2dbcTransactionManager(db.getConnectionFactory()));
        this.changes = changes;
        this.flows = flows;
        this.guarded = new GuardedEnqueues(db, transactions, changes);
        this.singles = new Batcher<>("enqueue", 1000, SINGLE_ENQUEUES_IN_FLIGHT, this::enqueueGrouped);
        this.onWorkerPool = onWorkerPool == null ? this : onWorkerPool;
    }

    /** The same store on the in-process workers' own pool. */
    public TaskStore onWorkerPool() {
        return onWorkerPool;
    }

    /** One task for one queue, waiting to share an enqueue statement. */
    private record Single(String queue, NewTask task) {
    }

    /** What became of one grouped enqueue: its task, or the failure of its own statement. */
    private record Attempt(@Nullable Enqueued enqueued, @Nullable Throwable failure) {

        Mono<Enqueued> asMono() {
            return failure != null ? Mono.error(failure) : Mono.justOrEmpty(enqueued);
        }
    }

    /**
     * Enqueues tasks on one queue in one statement, all or none. A task whose idempotency key
     * already exists on the queue is not inserted; the existing task is returned in its place.
     * A batch with unique or debounced tasks is one transaction of several statements instead
     * (see {@link GuardedEnqueues}). The result is in the order of {@code tasks}.
     */
    public Mono<List<Enqueued>> enqueue(String queue, List<NewTask> tasks) {
        if (tasks.stream().anyMatch(NewTask::guarded)) {
            return guarded.enqueue(queue, tasks);
        }
        return enqueueRound(queue, tasks, new Enqueued[tasks.size()], allIndexes(tasks.size()), 1)
                .map(List::of);
    }

    /**
     * Enqueues one task. Concurrent calls without an idempotency key are grouped into shared
     * statements (one per queue in the group), which is what lets many small requests go as fast
     * as a few big ones; each caller still gets its own task, and a caller is told of a failure
     * only when its own statement failed, which then created nothing. A call that finds no
     * statement running goes at once. A call with a key goes alone: resolving a taken key reads in
     * a second statement, and a failure there must not reach callers whose tasks were created.
     */
    public Mono<Enqueued> enqueueOne(String queue, NewTask task) {
        if (task.idempotencyKey() != null || task.guarded()) {
            return enqueue(queue, List.of(task)).map(enqueued -> enqueued.get(0));
        }
        return singles.submit(new Single(queue, task)).flatMap(Attempt::asMono);
    }

    private Mono<List<Attempt>> enqueueGrouped(List<Single> group) {
        Map<String, List<Integer>> positionsByQueue = new LinkedHashMap<>();
        for (int i = 0; i < group.size(); i++) {
            positionsByQueue.computeIfAbsent(group.get(i).queue(), queue -> new ArrayList<>()).add(i);
        }
        Attempt[] results = new Attempt[group.size()];
        return Flux.fromIterable(positionsByQueue.entrySet())
                .flatMap(byQueue -> {
                    List<Integer> positions = byQueue.getValue();
                    return enqueue(byQueue.getKey(), positions.stream().map(i -> group.get(i).task()).toList())
                            .doOnNext(enqueued -> {
                                for (int i = 0; i < positions.size(); i++) {
                                    results[positions.get(i)] = new Attempt(enqueued.get(i), null);
                                }
                            })
                            .onErrorResume(failure -> {
                                positions.forEach(i -> results[i] = new Attempt(null, failure));
                                return Mono.empty();
                            });
                })
                .then(Mono.fromSupplier(() -> Arrays.asList(results)));
    }

    private Mono<Enqueued[]> enqueueRound(String queue, List<NewTask> all, Enqueued[] results,
                                          List<Integer> pending, int round) {
        List<NewTask> batch = pending.stream().map(all::get).toList();
        return insertMany(queue, batch)
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .doOnNext(inserted -> changes.enqueued(inserted.values()))
                .flatMap(inserted -> {
                    List<Integer> replayed = new ArrayList<>();
                    for (int i = 0; i < pending.size(); i++) {
                        Task task = inserted.get(i + 1);
                        if (task != null) {
                            results[pending.get(i)] = new Enqueued(task, Enqueued.How.CREATED);
                        } else {
                            replayed.add(pending.get(i));
                        }
                    }
                    return replayed.isEmpty() ? Mono.just(results)
                            : resolveReplays(queue, all, results, replayed, round);
                });
    }

    private Mono<Enqueued[]> resolveReplays(String queue, List<NewTask> all, Enqueued[] results,
                                            List<Integer> replayed, int round) {
        String[] keys = replayed.stream().map(i -> all.get(i).idempotencyKey()).toArray(String[]::new);
        return db.sql(TaskSql.FIND_BY_KEYS).bind("queue", queue).bind("keys", keys)
                .map(TaskStore::toTask).all()
                .collectMap(Task::idempotencyKey, Function.identity())
                .flatMap(existing -> {
                    List<Integer> vanished = new ArrayList<>();
                    for (int i : replayed) {
                        Task task = existing.get(all.get(i).idempotencyKey());
                        if (task != null) {
                            results[i] = new Enqueued(task, Enqueued.How.REPLAYED);
                        } else {
                            vanished.add(i);
                        }
                    }
                    if (vanished.isEmpty()) {
                        return Mono.just(results);
                    }
                    if (round >= MAX_KEY_RACE_ROUNDS) {
                        return Mono.error(new IllegalStateException(
                                "idempotency keys kept changing hands during enqueue: " + vanished.size()));
                    }
                    return enqueueRound(queue, all, results, vanished, round + 1);
                });
    }

    /** Inserts what it can; emits (position from 1, task) for each inserted row. */
    private Flux<Map.Entry<Integer, Task>> insertMany(String queue, List<NewTask> tasks) {
        return enqueueStatement(db, queue, tasks)
                .map(row -> Map.entry(Math.toIntExact(Objects.requireNonNull(row.get("ord", Long.class))),
                        toTask(row)))
                .all();
    }

    /**
     * Inserts tasks without idempotency keys in the caller's transaction and announces nothing:
     * the caller hands them to {@link #announceEnqueued} once its transaction has committed, so
     * that no worker wakes for a task it cannot see yet.
     */
    public Mono<List<Task>> insertUnannounced(String queue, List<NewTask> tasks) {
        if (tasks.stream().anyMatch(task -> task.idempotencyKey() != null || task.guarded())) {
            return Mono.error(new IllegalArgumentException("only plain tasks are inserted unannounced"));
        }
        return enqueueStatement(db, queue, tasks).map(TaskStore::toTask).all().collectList();
    }

    /** What follows the commit of {@link #insertUnannounced}: metrics, wake-ups, the event nudge. */
    public void announceEnqueued(List<Task> inserted) {
        changes.enqueued(inserted);
    }

    /** The enqueue statement, bound: the service's hot path, also run bare by the benchmark. */
    static DatabaseClient.GenericExecuteSpec enqueueStatement(DatabaseClient db, String queue, List<NewTask> tasks) {
        int n = tasks.size();
        String[] types = new String[n];
        String[] payloads = new String[n];
        Short[] priorities = new Short[n];
        String[] runAts = new String[n];
        Long[] delaysMs = new Long[n];
        Integer[] maxAttempts = new Integer[n];
        String[] keys = new String[n];
        Integer[] timeouts = new Integer[n];
        String[] concurrencyKeys = new String[n];
        Integer[] maxSnoozes = new Integer[n];
        String[] uniqueKeys = new String[n];
        String[] debounceKeys = new String[n];
        Long[] debounceMaxMs = new Long[n];
        String[] schedules = new String[n];
        String[] scheduledFors = new String[n];
        String[] traceparents = new String[n];
        for (int i = 0; i < n; i++) {
            NewTask task = tasks.get(i);
            types[i] = task.type();
            payloads[i] = task.payload();
            priorities[i] = (short) task.priority();
            runAts[i] = task.runAt() == null ? null : task.runAt().toString();
            delaysMs[i] = task.delay().toMillis();
            maxAttempts[i] = task.maxAttempts();
            keys[i] = task.idempotencyKey();
            timeouts[i] = task.timeoutSeconds();
            concurrencyKeys[i] = task.concurrencyKey() == null ? "" : task.concurrencyKey();
            maxSnoozes[i] = task.maxSnoozes();
            if (task.unique() != null) {
                uniqueKeys[i] = Objects.requireNonNull(task.unique().key(), "unique key resolved before the insert");
            }
            if (task.debounce() != null) {
                debounceKeys[i] = task.debounce().key();
                debounceMaxMs[i] = task.debounce().maxDelay() == null ? null : task.debounce().maxDelay().toMillis();
            }
            if (task.origin() != null) {
                schedules[i] = task.origin().schedule();
                scheduledFors[i] = task.origin().scheduledFor().toString();
            }
            traceparents[i] = task.traceparent();
        }
        return db.sql(TaskSql.ENQUEUE_MANY)
                .bind("queue", queue)
                .bind("types", types)
                .bind("payloads", payloads)
                .bind("priorities", priorities)
                .bind("runAts", runAts)
                .bind("delaysMs", delaysMs)
                .bind("maxAttempts", maxAttempts)
                .bind("keys", keys)
                .bind("timeouts", timeouts)
                .bind("concurrencyKeys", concurrencyKeys)
                .bind("maxSnoozes", maxSnoozes)
                .bind("uniqueKeys", uniqueKeys)
                .bind("debounceKeys", debounceKeys)
                .bind("debounceMaxMs", debounceMaxMs)
                .bind("schedules", schedules)
                .bind("scheduledFors", scheduledFors)
                .bind("traceparents", traceparents);
    }

    public Mono<Task> get(long id) {
        return db.sql(TaskSql.FIND_BY_ID).bind("id", id).map(TaskStore::toTask).one()
                .switchIfEmpty(Mono.error(() -> new TaskNotFoundException(id)));
    }

    /**
     * A page of tasks, newest first; asks for one row more than the page to know if more exist.
     * The page also ends where its payloads and results reach {@link #PAGE_BYTES}.
     */
    public Mono<TaskPage> list(TaskFilter filter) {
        StringBuilder sql = new StringBuilder(TaskSql.LIST_PREFIX);
        Map<String, Object> binds = new HashMap<>();
        andEquals(sql, binds, "queue", filter.queue());
        andEquals(sql, binds, "state", filter.state() == null ? null : filter.state().wireName());
        andEquals(sql, binds, "type", filter.type());
        andEquals(sql, binds, "concurrency_key", filter.concurrencyKey());
        andEquals(sql, binds, "schedule", filter.schedule());
        if (filter.beforeId() != null) {
            sql.append(" AND id < :beforeId");
            binds.put("beforeId", filter.beforeId());
        }
        sql.append(TaskSql.LIST_SUFFIX);
        binds.put("limit", filter.limit() + 1);
        binds.put("maxBytes", PAGE_BYTES);
        return db.sql(sql.toString()).bindValues(binds)
                .map(row -> Map.entry(toTask(row), Objects.requireNonNull(row.get("page_rows", Long.class))))
                .all().collectList()
                .map(rows -> {
                    List<Task> tasks = rows.stream().map(Map.Entry::getKey).toList();
                    boolean cutByBytes = !rows.isEmpty() && rows.size() < rows.get(0).getValue();
                    if (tasks.size() > filter.limit()) {
                        return new TaskPage(tasks.subList(0, filter.limit()), tasks.get(filter.limit() - 1).id());
                    }
                    return cutByBytes ? new TaskPage(tasks, tasks.get(tasks.size() - 1).id()) : new TaskPage(tasks, null);
                });
    }

    /** Adds {@code AND column = :column} to a filter, with its value, unless the value is null. */
    private static void andEquals(StringBuilder sql, Map<String, Object> binds, String column, @Nullable Object value) {
        if (value != null) {
            sql.append(" AND ").append(column).append(" = :").append(column);
            binds.put(column, value);
        }
    }

    /** Deletes a terminal task; its events stay until retention prunes them. */
    public Mono<Void> delete(long id) {
        return deleteMany(List.of(id))
                .flatMap(deleted -> deleted > 0 ? Mono.empty() : explainRefusal(id, "deleted"))
                .then();
    }

    private <T> Mono<T> explainRefusal(long id, String action) {
        return db.sql(TaskSql.STATE_OF).bind("id", id)
                .map(row -> TaskState.fromColumn(Objects.requireNonNull(row.get("state", String.class))))
                .one()
                .switchIfEmpty(Mono.error(() -> new TaskNotFoundException(id)))
                .flatMap(state -> Mono.error(new IllegalTransitionException(id, state, action)));
    }

    /**
     * Claims due tasks in claim order under the lease {@code leaseId}; see {@link TaskSql#CLAIM_ANY_TYPE}.
     * Package-private: claims go through {@link ClaimHandoff}, which sees each one delivered or released.
     */
    Flux<Task> claim(Claim claim, UUID leaseId) {
        Mono<List<Task>> statement;
        if (!flows.controlled(claim.queue())) {
            statement = bounded(claimStatement(db, claim, leaseId).map(TaskStore::toTask).all().collectList());
        } else if (flows.of(claim.queue()).byKey()) {
            statement = claimUnderLock(claim, leaseId);
        } else {
            // each path its own transaction: the refusal aborts the first one
            statement = bounded(claimUnderFlow(claim, leaseId))
                    .onErrorResume(TaskStore::limitsGoByKey, e -> claimUnderLock(claim, leaseId));
        }
        return statement
                .doOnNext(claimed -> changes.claimed(claim.queue(), claimed))
                .flatMapIterable(claimed -> claimed);
    }

    /** A claim statement outside a transaction of its own, in one where it needs one for its bounds. */
    private Mono<List<Task>> bounded(Mono<List<Task>> claim) {
        return claimsInTransactions ? transactions.transactional(claim) : claim;
    }

    /** The claim statement, bound: the service's hot path, also run bare by the benchmark's ceiling. */
    static DatabaseClient.GenericExecuteSpec claimStatement(DatabaseClient db, Claim claim, UUID leaseId) {
        return claimStatement(db, claim, leaseId, FlowLimits.NONE, null, false);
    }

    /**
     * A claim on a queue whose flow control counts the queue as a whole: one statement that takes
     * the queue's row lock, reads the limits and claims within them; see {@link TaskSql#CLAIM_UNDER_FLOW}.
     */
    private Mono<List<Task>> claimUnderFlow(Claim claim, UUID leaseId) {
        String[] types = claim.types().isEmpty() ? null : claim.types().toArray(String[]::new);
        return db.sql(TaskSql.CLAIM_UNDER_FLOW)
                .bind("queue", claim.queue())
                .bind("types", Parameter.fromOrEmpty(types, String[].class))
                .bind("limit", claim.limit())
                .bind("workerId", claim.workerId())
                .bind("leaseId", leaseId)
                .bind("leaseMs", claim.lease().toMillis())
                .map(TaskStore::toTask).all().collectList();
    }

    /** Whether a claim under flow control was refused because the queue's limits now go by key. */
    private static boolean limitsGoByKey(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof R2dbcException r2dbc && TaskSql.LIMITS_BY_KEY.equals(r2dbc.getSqlState())) {
                return true;
            }
        }
        return false;
    }

    /**
     * A claim on a queue with flow control by concurrency key: one transaction that first takes the queue's row lock
     * and reads its settings as they are now, then claims within them (see {@link QueueSql#LOCK_FOR_CLAIM}).
     */
    private Mono<List<Task>> claimUnderLock(Claim claim, UUID leaseId) {
        Mono<List<Task>> claimed = db.sql(QueueSql.LOCK_FOR_CLAIM).bind("queue", claim.queue())
                .map(row -> Optional.of(new LockedQueue(QueueFlows.limitsOf(row),
                        Boolean.TRUE.equals(row.get("paused", Boolean.class)), row.get("last_key", String.class))))
                .one()
                .defaultIfEmpty(Optional.empty())
                .flatMap(locked -> {
                    if (locked.isPresent() && locked.get().paused()) {
                        return Mono.just(List.<Task>of());
                    }
                    FlowLimits limits = locked.map(LockedQueue::limits).orElse(FlowLimits.NONE);
                    String lastKey = locked.map(LockedQueue::lastKey).orElse(null);
                    return budget(claim, limits).flatMap(budget -> budget == 0 ? Mono.just(List.<Task>of())
                            : claimStatement(db, claim.withLimit(budget), leaseId, limits, lastKey, true)
                                    .map(TaskStore::toTask).all().collectList());
                });
        return transactions.transactional(claimed);
    }

    /** How many tasks the claim may start now, under the queue's lock; see {@link TaskSql#CLAIM_BUDGET}. */
    private Mono<Integer> budget(Claim claim, FlowLimits limits) {
        DatabaseClient.GenericExecuteSpec statement = db.sql(TaskSql.CLAIM_BUDGET)
                .bind("queue", claim.queue())
                .bind("limit", claim.limit())
                .bind("maxRunning", Parameter.fromOrEmpty(limits.maxRunning(), Integer.class));
        return bindRate(statement, "rate", limits.rate())
                .map(row -> Objects.requireNonNull(row.get("n", Integer.class)))
                .one();
    }

    /** A flow-controlled queue as its claim found it under the lock. */
    private record LockedQueue(FlowLimits limits, boolean paused, @Nullable String lastKey) {
    }

    private static DatabaseClient.GenericExecuteSpec claimStatement(DatabaseClient db, Claim claim, UUID leaseId,
                                                                    FlowLimits limits, @Nullable String lastKey,
                                                                    boolean underLock) {
        String[] types = claim.types().toArray(String[]::new);
        DatabaseClient.GenericExecuteSpec statement;
        if (limits.byKey()) {
            statement = bindRate(db.sql(TaskSql.CLAIM_BY_KEY), "ratePerKey", limits.ratePerKey())
                    .bind("types", types)
                    .bind("maxRunningPerKey", Parameter.fromOrEmpty(limits.maxRunningPerKey(), Integer.class))
                    .bind("roundRobin", limits.fairness() == FlowLimits.Fairness.ROUND_ROBIN)
                    .bind("lastKey", Parameter.fromOrEmpty(lastKey, String.class));
        } else {
            statement = (types.length == 0 ? db.sql(TaskSql.CLAIM_ANY_TYPE)
                    : db.sql(TaskSql.CLAIM_OF_TYPES).bind("types", types))
                    .bind("underLock", underLock);
        }
        return bindRate(statement, "rate", limits.rate())
                .bind("queue", claim.queue())
                .bind("limit", claim.limit())
                .bind("workerId", claim.workerId())
                .bind("leaseId", leaseId)
                .bind("leaseMs", claim.lease().toMillis());
    }

    /** Binds a rate as :{name}Count and :{name}PeriodMs, both null when there is none. */
    private static DatabaseClient.GenericExecuteSpec bindRate(DatabaseClient.GenericExecuteSpec statement, String name,
                                                              FlowLimits.@Nullable Rate rate) {
        return statement.bind(name + "Count", Parameter.fromOrEmpty(rate == null ? null : rate.count(), Integer.class))
                .bind(name + "PeriodMs", Parameter.fromOrEmpty(rate == null ? null : rate.periodMillis(), Long.class));
    }

    /** A statement's one row's {@code column}, milliseconds from now, as a duration; empty when null. */
    private static Mono<Duration> millisFromNow(DatabaseClient.GenericExecuteSpec statement, String column) {
        return statement.map(row -> Optional.ofNullable(row.get(column, Long.class)))
                .one()
                .flatMap(Mono::justOrEmpty)
                .map(ms -> Duration.ofMillis(Math.max(0, ms)));
    }

    /** Whether claims on the queue run under its flow control (as this replica last read it). */
    public boolean flowControlled(String queue) {
        return flows.controlled(queue);
    }

    /**
     * How long until the next task of a queue (of some types; empty for any) comes due, by the
     * database's clock; empty when none waits for a later time.
     */
    public Mono<Duration> nextDue(String queue, Set<String> types) {
        DatabaseClient.GenericExecuteSpec statement = types.isEmpty()
                ? db.sql(TaskSql.NEXT_DUE_ANY_TYPE)
                : db.sql(TaskSql.NEXT_DUE_OF_TYPES).bind("types", types.toArray(String[]::new));
        Mono<Duration> due = millisFromNow(statement.bind("queue", queue), "due_in_ms");
        FlowLimits limits = flows.of(queue);
        if (limits.rate() == null && limits.ratePerKey() == null) {
            return due;
        }
        Mono<Duration> rateFrees = millisFromNow(bindRate(bindRate(db.sql(TaskSql.RATE_FREES_IN).bind("queue", queue),
                "rate", limits.rate()), "ratePerKey", limits.ratePerKey()), "frees_in_ms");
        // The sooner of the two: a task coming due, or the rate letting the next claim start.
        return Flux.merge(due, rateFrees).reduce((a, b) -> a.compareTo(b) <= 0 ? a : b);
    }

    /** Records many outcomes in one statement; emits what each left of a task whose worker still held it. */
    public Flux<RecordedOutcome> complete(List<Outcome> outcomes) {
        return completeStatement(db, outcomes).map(TaskStore::toRecordedOutcome).all().collectList()
                .doOnNext(this::followOutcomes)
                .flatMapIterable(recorded -> recorded);
    }

    /** Records one outcome of a worker that must still hold the lease; explains (404, 409) when not. */
    public Mono<Task> completeHeld(Outcome outcome) {
        return bindOutcomes(db.sql(TaskSql.COMPLETE_RETURNING_TASKS), List.of(outcome))
                .map(row -> Map.entry(toTask(row), toRecordedOutcome(row)))
                .one()
                .doOnNext(recorded -> followOutcomes(List.of(recorded.getValue())))
                .map(Map.Entry::getKey)
                .switchIfEmpty(Mono.defer(() -> refuseLease(outcome.taskId())));
    }

    private void followOutcomes(List<RecordedOutcome> recorded) {
        changes.ended(recorded.stream().filter(outcome -> !outcome.snoozed()).toList());
        changes.snoozed(recorded.stream().filter(RecordedOutcome::snoozed).toList());
    }

    /** The statement that records outcomes, bound: the service's hot path, also run bare by the benchmark. */
    static DatabaseClient.GenericExecuteSpec completeStatement(DatabaseClient db, List<Outcome> outcomes) {
        return bindOutcomes(db.sql(TaskSql.COMPLETE_MANY), outcomes);
    }

    private static DatabaseClient.GenericExecuteSpec bindOutcomes(DatabaseClient.GenericExecuteSpec statement,
                                                                  List<Outcome> outcomes) {
        int n = outcomes.size();
        Long[] ids = new Long[n];
        UUID[] leaseIds = new UUID[n];
        String[] workerIds = new String[n];
        Boolean[] succeeded = new Boolean[n];
        String[] results = new String[n];
        String[] errors = new String[n];
        Boolean[] retryable = new Boolean[n];
        Long[] delaysMs = new Long[n];
        Long[] snoozesMs = new Long[n];
        for (int i = 0; i < n; i++) {
            Outcome outcome = outcomes.get(i);
            snoozesMs[i] = outcome.snooze() == null ? null : outcome.snooze().toMillis();
            ids[i] = outcome.taskId();
            leaseIds[i] = outcome.leaseId();
            workerIds[i] = outcome.workerId();
            succeeded[i] = outcome.succeeded();
            results[i] = outcome.result();
            errors[i] = outcome.error();
            retryable[i] = outcome.retryable();
            delaysMs[i] = outcome.retryDelay().toMillis();
        }
        return statement
                .bind("ids", ids).bind("leaseIds", leaseIds).bind("workerIds", workerIds)
                .bind("succeeded", succeeded).bind("results", results).bind("errors", errors)
                .bind("retryable", retryable).bind("delaysMs", delaysMs).bind("snoozesMs", snoozesMs);
    }

    /**
     * Reports progress of a running attempt; empty when the worker no longer holds it (the lease
     * {@code leaseId}, or any of its leases when that is null).
     */
    public Mono<Task> reportProgress(long id, String workerId, @Nullable UUID leaseId, @Nullable Integer percent,
                                     @Nullable String message) {
        return db.sql(TaskSql.REPORT_PROGRESS)
                .bind("id", id).bind("workerId", workerId)
                .bind("leaseId", Parameter.fromOrEmpty(leaseId, UUID.class))
                .bind("percent", Parameter.fromOrEmpty(percent, Integer.class))
                .bind("message", Parameter.fromOrEmpty(message, String.class))
                .map(TaskStore::toTask)
                .one()
                .doOnNext(task -> changes.progressed());
    }

    /**
     * Extends the lease of a task its worker still holds, never past the attempt's timeout;
     * explains (404, 409) when it does not.
     */
    public Mono<Task> heartbeat(long id, String workerId, @Nullable UUID leaseId, Duration lease) {
        return db.sql(TaskSql.HEARTBEAT).bind("id", id).bind("workerId", workerId)
                .bind("leaseId", Parameter.fromOrEmpty(leaseId, UUID.class)).bind("leaseMs", lease.toMillis())
                .map(TaskStore::toTask).one()
                .switchIfEmpty(Mono.defer(() -> refuseLease(id)));
    }

    /** Like {@link #reportProgress}, but explains (404, 409) when the worker does not hold the task. */
    public Mono<Task> reportHeldProgress(long id, String workerId, @Nullable UUID leaseId, @Nullable Integer percent,
                                         @Nullable String message) {
        return reportProgress(id, workerId, leaseId, percent, message)
                .switchIfEmpty(Mono.defer(() -> refuseLease(id)));
    }

    private <T> Mono<T> refuseLease(long id) {
        return explainRefusal(id, "changed by a worker that does not hold its lease");
    }

    /** Renews leases a worker holds, never past their attempts' timeouts; emits those it still holds. */
    public Flux<LeaseRenewal> renewLeases(String workerId, List<LeaseKey> leases, Duration lease) {
        return db.sql(TaskSql.RENEW_LEASES)
                .bind("ids", leases.stream().map(LeaseKey::taskId).toArray(Long[]::new))
                .bind("leaseIds", leases.stream().map(LeaseKey::leaseId).toArray(UUID[]::new))
                .bind("workerId", workerId).bind("leaseMs", lease.toMillis())
                .map(row -> new LeaseRenewal(Objects.requireNonNull(row.get("id", Long.class)),
                        Objects.requireNonNull(row.get("lease_id", UUID.class)),
                        Duration.ofMillis(Objects.requireNonNull(row.get("lease_ms", Long.class)))))
                .all();
    }

    /**
     * Puts the tasks of some leases back to queued without counting the attempt, in statements of
     * at most {@link Claim#MAX_LIMIT} (a statement's events of one queue are one batch).
     */
    public Flux<Task> releaseLeases(List<LeaseKey> leases, String reason) {
        return Flux.fromIterable(leases).buffer(Claim.MAX_LIMIT).concatMap(chunk -> release(chunk, reason));
    }

    private Flux<Task> release(List<LeaseKey> leases, String reason) {
        return db.sql(TaskSql.RELEASE_LEASES)
                .bind("ids", leases.stream().map(LeaseKey::taskId).toArray(Long[]::new))
                .bind("leaseIds", leases.stream().map(LeaseKey::leaseId).toArray(UUID[]::new))
                .bind("error", reason)
                .map(TaskStore::toTask)
                .all()
                .collectList()
                .doOnNext(changes::released)
                .flatMapIterable(released -> released);
    }

    /**
     * Puts a task its worker holds back to queued, counting neither the attempt nor a snooze;
     * explains (404, 409) when the worker does not hold the lease {@code leaseId}.
     */
    public Mono<Task> releaseHeld(long id, String workerId, UUID leaseId, String reason) {
        return db.sql(TaskSql.RELEASE_HELD)
                .bind("id", id).bind("workerId", workerId).bind("leaseId", leaseId).bind("error", reason)
                .map(TaskStore::toTask)
                .one()
                .doOnNext(task -> changes.released(List.of(task)))
                .switchIfEmpty(Mono.defer(() -> refuseLease(id)));
    }

    /** Puts back to queued whatever one claim took and still holds, without counting the attempts. */
    Flux<Task> releaseClaim(String queue, UUID leaseId, String reason) {
        return db.sql(TaskSql.RELEASE_CLAIM)
                .bind("queue", queue).bind("leaseId", leaseId).bind("error", reason)
                .map(TaskStore::toTask)
                .all()
                .collectList()
                .doOnNext(changes::released)
                .flatMapIterable(released -> released);
    }

    /** Ends up to {@code limit} attempts whose lease expired or whose timeout passed. */
    public Flux<Task> rescueExpired(int limit) {
        return db.sql(TaskSql.RESCUE_EXPIRED).bind("limit", limit).map(TaskStore::toTask).all()
                .collectList()
                .doOnNext(changes::rescued)
                .flatMapIterable(rescued -> rescued);
    }

    /** Deletes the tombstones of up to {@code limit} deleted tasks that finished before {@code before}; emits how many. */
    public Mono<Long> pruneTombstones(Instant before, int limit) {
        return db.sql(TaskSql.PRUNE_TOMBSTONES).bind("before", before).bind("limit", limit)
                .map(row -> Objects.requireNonNull(row.get("pruned", Long.class)))
                .one();
    }

    /**
     * One round of retention of tasks and events over the batches after {@code after}, until
     * {@code limit} events were seen; see {@link TaskSql#PRUNE_OLD}.
     */
    public Mono<Pruning> pruneOld(Instant before, long after, int limit) {
        return db.sql(TaskSql.PRUNE_OLD).bind("before", before).bind("after", after).bind("limit", limit)
                .map(row -> {
                    Long last = row.get("last_examined", Long.class);
                    return new Pruning(Objects.requireNonNull(row.get("tasks", Long.class)),
                            Objects.requireNonNull(row.get("pruned", Long.class)),
                            Objects.requireNonNull(row.get("examined", Long.class)),
                            Objects.requireNonNull(row.get("old", Long.class)), last == null ? after : last);
                })
                .one();
    }

    /**
     * What a round of retention did.
     *
     * @param tasks how many finished tasks it deleted
     * @param pruned how many event batches it deleted
     * @param examined how many batches it looked at
     * @param old how many of those were old enough to delete
     * @param last the id of the last batch it looked at, where the next round starts
     */
    public record Pruning(long tasks, long pruned, long examined, long old, long last) {

        /** Whether a next round may find more: every batch this one looked at was old enough. */
        public boolean goesOn() {
            return examined > 0 && old == examined;
        }
    }

    /** Cancels a queued or running task. */
    public Mono<Cancelled> cancel(long id) {
        return cancelMany(List.of(id))
                .flatMap(cancelled -> cancelled.isEmpty() ? explainRefusal(id, "cancelled") : Mono.just(cancelled.get(0)));
    }

    /** Puts a failed or cancelled task back in its queue, due now, attempts and snoozes reset. */
    public Mono<Task> retry(long id) {
        return retryMany(List.of(id))
                .flatMap(retried -> retried.isEmpty() ? explainRefusal(id, "retried") : Mono.just(retried.get(0)));
    }

    /**
     * The tasks a bulk action looks at, in batches of at most {@link #BULK_BATCH} ids in id
     * order, {@code limit} in all: each batch is one short transaction of the action.
     */
    public Flux<List<Long>> bulkBatches(BulkSelection selection) {
        if (!selection.ids().isEmpty()) {
            List<Long> ids = selection.ids().stream().distinct().sorted().limit(selection.limit()).toList();
            return Flux.fromIterable(ids).buffer(BULK_BATCH);
        }
        StringBuilder sql = new StringBuilder(TaskSql.BULK_MATCH_PREFIX);
        Map<String, Object> binds = new HashMap<>();
        binds.put("queue", Objects.requireNonNull(selection.queue()));
        andEquals(sql, binds, "state", selection.state() == null ? null : selection.state().wireName());
        andEquals(sql, binds, "type", selection.type());
        andEquals(sql, binds, "concurrency_key", selection.concurrencyKey());
        andEquals(sql, binds, "schedule", selection.schedule());
        if (selection.createdBefore() != null) {
            sql.append(" AND created_at < :createdBefore");
            binds.put("createdBefore", selection.createdBefore());
        }
        String match = sql.append(TaskSql.BULK_MATCH_SUFFIX).toString();
        record Page(List<Long> ids, int remaining, boolean last) {
        }
        Function<Page, Mono<Page>> next = page -> {
            if (page.last() || page.remaining() == 0) {
                return Mono.empty();
            }
            int size = Math.min(BULK_BATCH, page.remaining());
            Map<String, Object> values = new HashMap<>(binds);
            values.put("after", page.ids().isEmpty() ? 0L : page.ids().get(page.ids().size() - 1));
            values.put("batch", size);
            return db.sql(match).bindValues(values).map(row -> Objects.requireNonNull(row.get("id", Long.class)))
                    .all().collectList()
                    .filter(ids -> !ids.isEmpty())
                    .map(ids -> new Page(ids, page.remaining() - ids.size(), ids.size() < size));
        };
        return next.apply(new Page(List.of(), selection.limit(), false))
                .expand(next)
                .map(Page::ids);
    }

    /** Retries the failed and cancelled tasks among {@code ids}; returns them. */
    public Mono<List<Task>> retryMany(List<Long> ids) {
        return db.sql(TaskSql.RETRY_MANY).bind("ids", ids.toArray(Long[]::new)).map(TaskStore::toTask).all()
                .collectList()
                .doOnNext(changes::retried);
    }

    /** Cancels the queued and running tasks among {@code ids}; returns them with the attempts that ran them. */
    public Mono<List<Cancelled>> cancelMany(List<Long> ids) {
        Mono<List<Cancelled>> cancel = db.sql(TaskSql.LOCK_FOR_CANCEL).bind("ids", ids.toArray(Long[]::new))
                .map(row -> Objects.requireNonNull(row.get("id", Long.class)))
                .all()
                .collectList()
                .flatMap(locked -> locked.isEmpty() ? Mono.just(List.<Cancelled>of())
                        : db.sql(TaskSql.CANCEL_MANY).bind("ids", locked.toArray(Long[]::new))
                                .map(row -> new Cancelled(toTask(row), row.get("previous_worker_id", String.class),
                                        row.get("previous_lease_id", UUID.class)))
                                .all()
                                .collectList());
        return transactions.transactional(cancel)
                .doOnNext(cancelled -> changes.ended(cancelled.stream().map(Cancelled::task).toList()));
    }

    /** Deletes the running rows of tasks no longer running; emits how many (see {@link TaskSql#FORGET_STRAY_ROWS}). */
    public Mono<Long> forgetStrayRows() {
        return db.sql(TaskSql.FORGET_STRAY_ROWS).fetch().rowsUpdated();
    }

    /** Deletes the terminal tasks among {@code ids}, leaving their events to retention; returns how many. */
    public Mono<Long> deleteMany(List<Long> ids) {
        return db.sql(TaskSql.DELETE_MANY).bind("ids", ids.toArray(Long[]::new))
                .map(row -> Objects.requireNonNull(row.get("deleted", Long.class)))
                .one();
    }

    /**
     * A cancelled task and the attempt that was running it, if it was running.
     *
     * @param task the task, now cancelled
     * @param previousWorkerId the worker that held it, or null if it was waiting
     * @param previousLeaseId the lease it ran under, or null if it was waiting
     */
    public record Cancelled(Task task, @Nullable String previousWorkerId, @Nullable UUID previousLeaseId) {
    }

    static Task toTask(Readable row) {
        int[] at = TaskColumns.of(row);
        return new Task(
                Objects.requireNonNull(row.get(at[TaskColumns.ID], Long.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.QUEUE], String.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.TYPE], String.class)),
                JsonbColumn.text(row, at[TaskColumns.PAYLOAD]),
                TaskState.fromColumn(Objects.requireNonNull(row.get(at[TaskColumns.STATE], String.class))),
                Objects.requireNonNull(row.get(at[TaskColumns.PRIORITY], Short.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.ATTEMPT], Integer.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.MAX_ATTEMPTS], Integer.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.RUN_AT], Instant.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.CREATED_AT], Instant.class)),
                row.get(at[TaskColumns.STARTED_AT], Instant.class),
                row.get(at[TaskColumns.FINISHED_AT], Instant.class),
                row.get(at[TaskColumns.WORKER_ID], String.class),
                row.get(at[TaskColumns.LEASE_ID], UUID.class),
                row.get(at[TaskColumns.LEASE_EXPIRES_AT], Instant.class),
                Objects.requireNonNull(row.get(at[TaskColumns.TIMEOUT_SECONDS], Integer.class)),
                row.get(at[TaskColumns.TIMEOUT_AT], Instant.class),
                toInteger(row.get(at[TaskColumns.PROGRESS_PERCENT], Short.class)),
                row.get(at[TaskColumns.PROGRESS_MESSAGE], String.class),
                JsonbColumn.text(row, at[TaskColumns.RESULT]),
                row.get(at[TaskColumns.LAST_ERROR], String.class),
                row.get(at[TaskColumns.IDEMPOTENCY_KEY], String.class),
                noKeyAsNull(row.get(at[TaskColumns.CONCURRENCY_KEY], String.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.SNOOZES], Integer.class)),
                Objects.requireNonNull(row.get(at[TaskColumns.MAX_SNOOZES], Integer.class)),
                row.get(at[TaskColumns.UNIQUE_KEY], String.class),
                row.get(at[TaskColumns.SCHEDULE], String.class),
                row.get(at[TaskColumns.SCHEDULED_FOR], Instant.class),
                row.get(at[TaskColumns.TRACEPARENT], String.class));
    }

    private static RecordedOutcome toRecordedOutcome(Readable row) {
        return new RecordedOutcome(
                Objects.requireNonNull(row.get("id", Long.class)),
                Objects.requireNonNull(row.get("queue", String.class)),
                Objects.requireNonNull(row.get("type", String.class)),
                TaskState.fromColumn(Objects.requireNonNull(row.get("state", String.class))),
                Objects.requireNonNull(row.get("run_at", Instant.class)),
                row.get("started_at", Instant.class),
                row.get("finished_at", Instant.class),
                Boolean.TRUE.equals(row.get("snoozed", Boolean.class)));
    }

    /** The group without a concurrency key is stored as '' (see V011). */
    private static @Nullable String noKeyAsNull(@Nullable String key) {
        return key == null || key.isEmpty() ? null : key;
    }

    private static @Nullable Integer toInteger(@Nullable Short value) {
        return value == null ? null : value.intValue();
    }

    private static List<Integer> allIndexes(int n) {
        return IntStream.range(0, n).boxed().toList();
    }
}
