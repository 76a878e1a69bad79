package dev.tasklane.queue;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;

import dev.tasklane.queue.Enqueued.How;
import dev.tasklane.queue.NewTask.Unique;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Enqueues of unique and debounced tasks. Each call is one transaction that first takes a
 * transaction-level advisory lock on every (queue, kind, key) it names, in a fixed order so that
 * two calls cannot deadlock, and then handles its tasks one by one: the idempotency key first,
 * then the unique scope or the debounce target, then the insert. Calls with a key in common thus
 * run one after the other, and each sees what the one before it committed; no index enforces the
 * key, so no later state change of a task can ever be refused because of it.
 */
final class GuardedEnqueues {

    private final DatabaseClient db;
    private final TransactionalOperator transactions;
    private final TaskChanges changes;

    GuardedEnqueues(DatabaseClient db, TransactionalOperator transactions, TaskChanges changes) {
        this.db = db;
        this.transactions = transactions;
        this.changes = changes;
    }

    /** Enqueues {@code tasks} on {@code queue}, all or none; the results are in their order. */
    Mono<List<Enqueued>> enqueue(String queue, List<NewTask> tasks) {
        Mono<List<Enqueued>> inTransaction = lockKeys(queue, tasks)
                .flatMap(resolved -> Flux.fromIterable(resolved)
                        .concatMap(task -> enqueueOne(queue, task))
                        .collectList());
        // Each statement, the commit included, is bounded (DatabaseBounds): a timer out here would
        // cancel a statement without first seeing it end.
        return transactions.transactional(inTransaction).doOnNext(this::announce);
    }

    /** Locks the keys; answers the tasks with their unique keys resolved (a hash where none was given). */
    private Mono<List<NewTask>> lockKeys(String queue, List<NewTask> tasks) {
        int n = tasks.size();
        String[] kinds = new String[n];
        String[] keys = new String[n];
        String[] types = new String[n];
        String[] payloads = new String[n];
        for (int i = 0; i < n; i++) {
            NewTask task = tasks.get(i);
            types[i] = task.type();
            payloads[i] = task.payload();
            if (task.unique() != null) {
                kinds[i] = "unique";
                keys[i] = task.unique().key();
            } else if (task.debounce() != null) {
                kinds[i] = "debounce";
                keys[i] = task.debounce().key();
            }
        }
        return db.sql(TaskSql.LOCK_GUARD_KEYS)
                .bind("queue", queue).bind("kinds", kinds).bind("keys", keys)
                .bind("types", types).bind("payloads", payloads)
                .map(row -> Map.entry(Math.toIntExact(Objects.requireNonNull(row.get("ord", Long.class))) - 1,
                        Objects.requireNonNull(row.get("key", String.class))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .map(resolved -> IntStream.range(0, n).mapToObj(i -> {
                    NewTask task = tasks.get(i);
                    Unique unique = task.unique();
                    return unique == null || unique.key() != null ? task
                            : task.withUnique(new Unique(resolved.get(i), unique.scope(), unique.windowSeconds()));
                }).toList());
    }

    private Mono<Enqueued> enqueueOne(String queue, NewTask task) {
        Mono<Enqueued> existing = task.unique() != null ? deduplicated(queue, task.unique())
                : task.debounce() != null ? debounced(queue, task) : Mono.empty();
        Mono<Enqueued> guarded = existing.switchIfEmpty(Mono.defer(() -> insert(queue, task)));
        if (task.idempotencyKey() == null) {
            return guarded;
        }
        return replayed(queue, task.idempotencyKey()).switchIfEmpty(guarded);
    }

    private Mono<Enqueued> replayed(String queue, String idempotencyKey) {
        return db.sql(TaskSql.FIND_BY_KEYS).bind("queue", queue).bind("keys", new String[] {idempotencyKey})
                .map(TaskStore::toTask).one()
                .map(task -> new Enqueued(task, How.REPLAYED));
    }

    private Mono<Enqueued> deduplicated(String queue, Unique unique) {
        return db.sql(TaskSql.FIND_UNIQUE)
                .bind("queue", queue)
                .bind("key", Objects.requireNonNull(unique.key()))
                .bind("scope", unique.scope().wireName())
                .bind("windowSeconds", unique.windowSeconds())
                .map(TaskStore::toTask).one()
                .map(task -> new Enqueued(task, How.DEDUPLICATED));
    }

    private Mono<Enqueued> debounced(String queue, NewTask task) {
        NewTask.Debounce debounce = Objects.requireNonNull(task.debounce());
        return db.sql(TaskSql.DEBOUNCE)
                .bind("queue", queue)
                .bind("key", debounce.key())
                .bind("payload", Parameter.fromOrEmpty(task.payload(), String.class))
                .bind("delayMs", debounce.delay().toMillis())
                .map(TaskStore::toTask).one()
                .map(moved -> new Enqueued(moved, How.DEBOUNCED));
    }

    /** Inserts the task; a concurrent plain enqueue may have taken its idempotency key meanwhile. */
    private Mono<Enqueued> insert(String queue, NewTask task) {
        Mono<Enqueued> inserted = TaskStore.enqueueStatement(db, queue, List.of(task))
                .map(TaskStore::toTask).one()
                .map(created -> new Enqueued(created, How.CREATED));
        if (task.idempotencyKey() == null) {
            return inserted;
        }
        return inserted.switchIfEmpty(Mono.defer(() -> replayed(queue, task.idempotencyKey())))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException(
                        "the idempotency key was taken and released during the enqueue; try again")));
    }

    private void announce(List<Enqueued> results) {
        changes.enqueued(results.stream().filter(Enqueued::created).map(Enqueued::task).toList());
        changes.debounced(results.stream().filter(r -> r.how() == How.DEBOUNCED).map(Enqueued::task).toList());
    }
}
