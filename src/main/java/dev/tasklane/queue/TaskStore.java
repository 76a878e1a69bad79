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
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.IntStream;

import dev.tasklane.events.EventLog;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.JsonbColumn;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The only code that runs SQL on the {@code task} table. */
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

    private final DatabaseClient db;
    private final EventLog events;
    private final TaskMetrics metrics;
    private final Batcher<Single, Attempt> singles;

    public TaskStore(DatabaseClient db, EventLog events, TaskMetrics metrics) {
        this.db = db;
        this.events = events;
        this.metrics = metrics;
        this.singles = new Batcher<>("enqueue", 1000, SINGLE_ENQUEUES_IN_FLIGHT, this::enqueueGrouped);
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
     * Tells the event reader that the rows just written appended events; the statement that
     * wrote them has NOTIFYed the other replicas at its commit.
     */
    private <T> Flux<T> appending(Flux<T> changed) {
        return recording(changed, rows -> { });
    }

    /** Like {@link #appending}, and hands the changed rows to the metrics first. */
    private <T> Flux<T> recording(Flux<T> changed, Consumer<List<T>> record) {
        return whenAny(changed, rows -> {
            record.accept(rows);
            events.appendedAndNotified();
        });
    }

    /** Like {@link #appending} for the enqueue statement, which sends no NOTIFY (see ENQUEUE_MANY). */
    private <T> Flux<T> enqueuing(Flux<T> inserted) {
        return whenAny(inserted, rows -> events.appended());
    }

    private static <T> Flux<T> whenAny(Flux<T> rows, Consumer<List<T>> action) {
        return rows.collectList().doOnNext(all -> {
            if (!all.isEmpty()) {
                action.accept(all);
            }
        }).flatMapIterable(all -> all);
    }

    /**
     * Enqueues tasks on one queue in one statement, all or none. A task whose idempotency key
     * already exists on the queue is not inserted; the existing task is returned in its place.
     * The result is in the order of {@code tasks}.
     */
    public Mono<List<Enqueued>> enqueue(String queue, List<NewTask> tasks) {
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
        if (task.idempotencyKey() != null) {
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
                .doOnNext(inserted -> metrics.enqueued(inserted.values()))
                .flatMap(inserted -> {
                    List<Integer> replayed = new ArrayList<>();
                    for (int i = 0; i < pending.size(); i++) {
                        Task task = inserted.get(i + 1);
                        if (task != null) {
                            results[pending.get(i)] = new Enqueued(task, true);
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
                            results[i] = new Enqueued(task, false);
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
                .all()
                .transform(this::enqueuing);
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
        for (int i = 0; i < n; i++) {
            NewTask task = tasks.get(i);
            types[i] = task.type();
            payloads[i] = task.payload();
            priorities[i] = (short) task.priority();
            runAts[i] = task.runAt() == null ? null : task.runAt().toString();
            delaysMs[i] = task.delay().toMillis();
            maxAttempts[i] = task.maxAttempts();
            keys[i] = task.idempotencyKey();
        }
        return db.sql(TaskSql.ENQUEUE_MANY)
                .bind("queue", queue)
                .bind("types", types)
                .bind("payloads", payloads)
                .bind("priorities", priorities)
                .bind("runAts", runAts)
                .bind("delaysMs", delaysMs)
                .bind("maxAttempts", maxAttempts)
                .bind("keys", keys);
    }

    public Mono<Task> get(long id) {
        return db.sql(TaskSql.FIND_BY_ID).bind("id", id).map(TaskStore::toTask).one()
                .switchIfEmpty(Mono.error(() -> new TaskNotFoundException(id)));
    }

    /** A page of tasks, newest first; asks for one row more than the page to know if more exist. */
    public Mono<TaskPage> list(TaskFilter filter) {
        StringBuilder sql = new StringBuilder(TaskSql.LIST_PREFIX);
        Map<String, Object> binds = new HashMap<>();
        if (filter.queue() != null) {
            sql.append(" AND queue = :queue");
            binds.put("queue", filter.queue());
        }
        if (filter.state() != null) {
            sql.append(" AND state = :state");
            binds.put("state", filter.state().wireName());
        }
        if (filter.type() != null) {
            sql.append(" AND type = :type");
            binds.put("type", filter.type());
        }
        if (filter.beforeId() != null) {
            sql.append(" AND id < :beforeId");
            binds.put("beforeId", filter.beforeId());
        }
        sql.append(TaskSql.LIST_SUFFIX);
        binds.put("limit", filter.limit() + 1);
        return db.sql(sql.toString()).bindValues(binds).map(TaskStore::toTask).all().collectList()
                .map(rows -> rows.size() > filter.limit()
                        ? new TaskPage(rows.subList(0, filter.limit()), rows.get(filter.limit() - 1).id())
                        : new TaskPage(rows, null));
    }

    /** Deletes a terminal task and its events. */
    public Mono<Void> delete(long id) {
        return db.sql(TaskSql.DELETE_TERMINAL).bind("id", id).map(row -> row.get("id", Long.class)).one()
                .switchIfEmpty(Mono.defer(() -> explainRefusal(id, "deleted")))
                .then();
    }

    private <T> Mono<T> explainRefusal(long id, String action) {
        return db.sql(TaskSql.STATE_OF).bind("id", id)
                .map(row -> TaskState.fromColumn(Objects.requireNonNull(row.get("state", String.class))))
                .one()
                .switchIfEmpty(Mono.error(() -> new TaskNotFoundException(id)))
                .flatMap(state -> Mono.error(new IllegalTransitionException(id, state, action)));
    }

    /** Claims due tasks in claim order; see {@link TaskSql#CLAIM}. */
    public Flux<Task> claim(Claim claim) {
        return claimStatement(db, claim)
                .map(TaskStore::toTask)
                .all()
                .transform(claimed -> recording(claimed, tasks -> metrics.claimed(claim.queue(), tasks)));
    }

    /** The claim statement, bound: the service's hot path, also run bare by the benchmark's ceiling. */
    static DatabaseClient.GenericExecuteSpec claimStatement(DatabaseClient db, Claim claim) {
        return db.sql(TaskSql.CLAIM)
                .bind("queue", claim.queue())
                .bind("anyType", claim.types().isEmpty())
                .bind("types", claim.types().toArray(String[]::new))
                .bind("limit", claim.limit())
                .bind("workerId", claim.workerId())
                .bind("leaseMs", claim.lease().toMillis());
    }

    /** Records many outcomes in one statement; emits the tasks whose worker still held them. */
    public Flux<Task> complete(List<Outcome> outcomes) {
        return completeStatement(db, outcomes)
                .map(TaskStore::toTask)
                .all()
                .transform(ended -> recording(ended, metrics::ended));
    }

    /** The statement that records outcomes, bound: the service's hot path, also run bare by the benchmark. */
    static DatabaseClient.GenericExecuteSpec completeStatement(DatabaseClient db, List<Outcome> outcomes) {
        int n = outcomes.size();
        Long[] ids = new Long[n];
        Integer[] attempts = new Integer[n];
        String[] workerIds = new String[n];
        Boolean[] succeeded = new Boolean[n];
        String[] results = new String[n];
        String[] errors = new String[n];
        Boolean[] retryable = new Boolean[n];
        Long[] delaysMs = new Long[n];
        Boolean[] leaseMustHold = new Boolean[n];
        for (int i = 0; i < n; i++) {
            Outcome outcome = outcomes.get(i);
            ids[i] = outcome.taskId();
            attempts[i] = outcome.attempt();
            workerIds[i] = outcome.workerId();
            succeeded[i] = outcome.succeeded();
            results[i] = outcome.result();
            errors[i] = outcome.error();
            retryable[i] = outcome.retryable();
            delaysMs[i] = outcome.retryDelay().toMillis();
            leaseMustHold[i] = outcome.leaseMustHold();
        }
        return db.sql(TaskSql.COMPLETE_MANY)
                .bind("ids", ids).bind("attempts", attempts).bind("workerIds", workerIds)
                .bind("succeeded", succeeded).bind("results", results).bind("errors", errors)
                .bind("retryable", retryable).bind("delaysMs", delaysMs).bind("leaseMustHold", leaseMustHold);
    }

    /**
     * Reports progress of a running attempt; empty when the worker no longer holds it.
     * An {@code attempt} below zero matches any attempt.
     */
    public Mono<Task> reportProgress(long id, String workerId, int attempt, @Nullable Integer percent,
                                     @Nullable String message) {
        return db.sql(TaskSql.REPORT_PROGRESS)
                .bind("id", id).bind("workerId", workerId).bind("attempt", attempt)
                .bind("percent", Parameter.fromOrEmpty(percent, Integer.class))
                .bind("message", Parameter.fromOrEmpty(message, String.class))
                .map(TaskStore::toTask)
                .one()
                .doOnNext(task -> events.appendedAndNotified());
    }

    /** Extends the lease of a task its worker still holds; explains (404, 409) when it does not. */
    public Mono<Task> heartbeat(long id, String workerId, Duration lease) {
        return db.sql(TaskSql.HEARTBEAT).bind("id", id).bind("workerId", workerId).bind("leaseMs", lease.toMillis())
                .map(TaskStore::toTask).one()
                .switchIfEmpty(Mono.defer(() -> refuseLease(id)));
    }

    /** Like {@link #reportProgress}, but explains (404, 409) when the worker does not hold the task. */
    public Mono<Task> reportHeldProgress(long id, String workerId, @Nullable Integer percent, @Nullable String message) {
        return reportProgress(id, workerId, -1, percent, message).switchIfEmpty(Mono.defer(() -> refuseLease(id)));
    }

    /** Records one outcome of a worker that must still hold the lease; explains (404, 409) when not. */
    public Mono<Task> completeHeld(Outcome outcome) {
        return complete(List.of(outcome)).next().switchIfEmpty(Mono.defer(() -> refuseLease(outcome.taskId())));
    }

    private <T> Mono<T> refuseLease(long id) {
        return explainRefusal(id, "changed by a worker that does not hold its lease");
    }

    /** Renews the leases a worker holds; emits the ids it still holds. */
    public Flux<Long> renewLeases(String workerId, List<Long> ids, Duration lease) {
        return db.sql(TaskSql.RENEW_LEASES)
                .bind("ids", ids.toArray(Long[]::new)).bind("workerId", workerId).bind("leaseMs", lease.toMillis())
                .map(row -> Objects.requireNonNull(row.get("id", Long.class)))
                .all();
    }

    /** Puts a worker's running tasks back to queued without counting the attempt. */
    public Flux<Task> release(String workerId, List<Long> ids, String reason) {
        return db.sql(TaskSql.RELEASE_MANY)
                .bind("ids", ids.toArray(Long[]::new)).bind("workerId", workerId).bind("error", reason)
                .map(TaskStore::toTask)
                .all()
                .transform(this::appending);
    }

    /** Requeues (or fails) up to {@code limit} tasks whose lease expired. */
    public Flux<Task> rescueExpired(int limit) {
        return db.sql(TaskSql.RESCUE_EXPIRED).bind("limit", limit).map(TaskStore::toTask).all()
                .transform(rescued -> recording(rescued, metrics::rescued));
    }

    /** Deletes up to {@code limit} terminal tasks finished before {@code before}, with their events; emits how many. */
    public Mono<Long> pruneFinished(Instant before, int limit) {
        return db.sql(TaskSql.PRUNE_FINISHED).bind("before", before).bind("limit", limit)
                .map(row -> Objects.requireNonNull(row.get("pruned", Long.class)))
                .one();
    }

    /** Cancels a queued or running task. */
    public Mono<Cancelled> cancel(long id) {
        return db.sql(TaskSql.CANCEL).bind("id", id)
                .map(row -> new Cancelled(toTask(row), row.get("previous_worker_id", String.class)))
                .one()
                .doOnNext(cancelled -> {
                    metrics.ended(List.of(cancelled.task()));
                    events.appendedAndNotified();
                })
                .switchIfEmpty(Mono.defer(() -> explainRefusal(id, "cancelled")));
    }

    /** Puts a failed or cancelled task back in its queue, due now, attempts reset. */
    public Mono<Task> retry(long id) {
        return db.sql(TaskSql.RETRY).bind("id", id).map(TaskStore::toTask).one()
                .doOnNext(task -> events.appendedAndNotified())
                .switchIfEmpty(Mono.defer(() -> explainRefusal(id, "retried")));
    }

    /**
     * A cancelled task and the worker that was running it, if it was running.
     *
     * @param task the task, now cancelled
     * @param previousWorkerId the worker that held it, or null if it was waiting
     */
    public record Cancelled(Task task, @Nullable String previousWorkerId) {
    }

    static Task toTask(Readable row) {
        return new Task(
                Objects.requireNonNull(row.get("id", Long.class)),
                Objects.requireNonNull(row.get("queue", String.class)),
                Objects.requireNonNull(row.get("type", String.class)),
                JsonbColumn.text(row, "payload"),
                TaskState.fromColumn(Objects.requireNonNull(row.get("state", String.class))),
                Objects.requireNonNull(row.get("priority", Short.class)),
                Objects.requireNonNull(row.get("attempt", Integer.class)),
                Objects.requireNonNull(row.get("max_attempts", Integer.class)),
                Objects.requireNonNull(row.get("run_at", Instant.class)),
                Objects.requireNonNull(row.get("created_at", Instant.class)),
                row.get("started_at", Instant.class),
                row.get("finished_at", Instant.class),
                row.get("worker_id", String.class),
                row.get("lease_expires_at", Instant.class),
                toInteger(row.get("progress_percent", Short.class)),
                row.get("progress_message", String.class),
                JsonbColumn.text(row, "result"),
                row.get("last_error", String.class),
                row.get("idempotency_key", String.class));
    }

    private static @Nullable Integer toInteger(@Nullable Short value) {
        return value == null ? null : value.intValue();
    }

    private static List<Integer> allIndexes(int n) {
        return IntStream.range(0, n).boxed().toList();
    }
}
