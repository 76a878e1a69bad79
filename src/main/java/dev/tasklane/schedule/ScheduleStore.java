package dev.tasklane.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.support.ExactJson;
import dev.tasklane.support.JsonbColumn;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.Parameter;
import org.springframework.stereotype.Component;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** The only code that runs SQL on {@code schedule} and {@code schedule_fire}. */
@Component
public class ScheduleStore {

    private static final JsonMapper JSON = ExactJson.MAPPER;

    private final DatabaseClient db;
    private final TransactionalOperator transactions;
    private final TaskStore tasks;

    ScheduleStore(DatabaseClient db, ReactiveTransactionManager transactionManager, TaskStore tasks) {
        this.db = db;
        this.transactions = TransactionalOperator.create(transactionManager);
        this.tasks = tasks;
    }

    /**
     * The database's clock: the one claims and leases go by, and so every replica's scheduler,
     * whatever the replica's own clock says.
     */
    public Mono<Instant> now() {
        return db.sql(ScheduleSql.NOW).map(row -> Objects.requireNonNull(row.get("now", Instant.class))).one();
    }

    /** Creates or replaces a schedule as of {@code now}; emits true when it was created. */
    public Mono<Boolean> put(String name, Schedule.Definition definition, Instant now) {
        return db.sql(ScheduleSql.PUT)
                .bind("name", name)
                .bind("cron", definition.cron().text())
                .bind("timezone", definition.timezone().getId())
                .bind("queue", definition.queue())
                .bind("task", templateJson(definition.task()))
                .bind("overlap", definition.overlap().wireName())
                .bind("catchUp", definition.catchUp().wireName())
                .bind("paused", definition.paused())
                .bind("now", now)
                .bind("nextFireAt", Parameter.fromOrEmpty(
                        definition.cron().next(now, definition.timezone()).orElse(null), Instant.class))
                .map(row -> Boolean.TRUE.equals(row.get("created", Boolean.class)))
                .one();
    }

    public Mono<Schedule> find(String name) {
        return db.sql(ScheduleSql.FIND).bind("name", name).map(ScheduleStore::toSchedule).one();
    }

    public Flux<Schedule> list() {
        return db.sql(ScheduleSql.LIST).map(ScheduleStore::toSchedule).all();
    }

    /** Emits true when the schedule existed. Its fire times go with it. */
    public Mono<Boolean> delete(String name) {
        return db.sql(ScheduleSql.DELETE).bind("name", name).fetch().rowsUpdated().map(n -> n > 0);
    }

    /** Pauses a schedule; emits nothing when there is none. */
    public Mono<Schedule> pause(String name) {
        return setPaused(name, true, null);
    }

    /** Resumes a schedule; fire times missed while it was paused are not made up for. */
    public Mono<Schedule> resume(String name, Instant now) {
        return setPaused(name, false, now);
    }

    private Mono<Schedule> setPaused(String name, boolean paused, @Nullable Instant resumedAt) {
        Mono<Void> change = db.sql(ScheduleSql.LOCK).bind("name", name).map(ScheduleStore::toSchedule).one()
                .flatMap(schedule -> {
                    Instant settled = resumedAt != null && resumedAt.isAfter(schedule.settledUntil()) ? resumedAt
                            : schedule.settledUntil();
                    Schedule.Definition definition = schedule.definition();
                    return db.sql(ScheduleSql.SET_PAUSED)
                            .bind("name", name)
                            .bind("paused", paused)
                            .bind("resumedAt", Parameter.fromOrEmpty(resumedAt, Instant.class))
                            .bind("settledUntil", settled)
                            .bind("nextFireAt", Parameter.fromOrEmpty(
                                    definition.cron().next(settled, definition.timezone()).orElse(null), Instant.class))
                            .fetch().rowsUpdated();
                })
                .then();
        return transactions.transactional(change).then(find(name));
    }

    /** Names of schedules with a fire time due at {@code now}. */
    Flux<String> due(Instant now, int limit) {
        return db.sql(ScheduleSql.DUE).bind("now", now).bind("limit", limit)
                .map(row -> Objects.requireNonNull(row.get("name", String.class))).all();
    }

    /**
     * One round for one schedule, in one transaction: takes its lock (or leaves it to the replica
     * that holds it), claims each fire time the plan makes, makes a task for each claimed one, and
     * settles the schedule. Emits the tasks made; the caller announces them after the commit.
     */
    Mono<List<Task>> fire(String name, Instant now, Duration grace) {
        Mono<List<Task>> round = db.sql(ScheduleSql.LOCK_DUE).bind("name", name).bind("now", now)
                .map(ScheduleStore::toSchedule).one()
                .flatMap(schedule -> {
                    Schedule.Definition definition = schedule.definition();
                    FirePlan plan = FirePlan.of(definition.cron(), definition.timezone(), definition.catchUp(),
                            schedule.settledUntil(), now, grace);
                    return Flux.fromIterable(plan.fireTimes())
                            .concatMap(fireAt -> fireOnce(schedule, fireAt))
                            .collectList()
                            .flatMap(made -> db.sql(ScheduleSql.SETTLE)
                                    .bind("name", name)
                                    .bind("settledUntil", plan.settledUntil())
                                    .bind("nextFireAt", Parameter.fromOrEmpty(plan.nextFireAt(), Instant.class))
                                    .fetch().rowsUpdated()
                                    .thenReturn(made));
                });
        // Every statement and the commit are bounded (DatabaseBounds), by PostgreSQL too: a replica
        // stuck in a round cannot hold the schedule's lock, and with it the schedule, for longer.
        return transactions.transactional(round).defaultIfEmpty(List.of());
    }

    private Mono<Task> fireOnce(Schedule schedule, Instant fireAt) {
        Schedule.Definition definition = schedule.definition();
        return db.sql(ScheduleSql.CLAIM_FIRE)
                .bind("name", schedule.name())
                .bind("fireAt", fireAt)
                .bind("skipOverlap", definition.overlap() == Schedule.Overlap.SKIP)
                .map(row -> Objects.requireNonNull(row.get("outcome", String.class)))
                .one()
                .filter("enqueued"::equals)
                .flatMap(claimed -> tasks.insertUnannounced(definition.queue(),
                        List.of(definition.task().toTask(schedule.name(), fireAt))))
                .map(made -> made.get(0))
                .flatMap(task -> db.sql(ScheduleSql.SET_FIRE_TASK)
                        .bind("taskId", task.id()).bind("name", schedule.name()).bind("fireAt", fireAt)
                        .fetch().rowsUpdated().thenReturn(task));
    }

    /** A task for the schedule now, whatever its overlap says; not a fire time. */
    public Mono<Task> trigger(Schedule schedule, Instant now) {
        Schedule.Definition definition = schedule.definition();
        return tasks.insertUnannounced(definition.queue(), List.of(definition.task().toTask(schedule.name(), now)))
                .map(made -> made.get(0))
                .doOnNext(task -> tasks.announceEnqueued(List.of(task)));
    }

    /** Deletes settled fire times older than {@code before}, at most {@code limit}; emits how many. */
    public Mono<Long> pruneFires(Instant before, int limit) {
        return db.sql(ScheduleSql.PRUNE_FIRES).bind("before", before).bind("limit", limit).fetch().rowsUpdated();
    }

    /** The template as the JSON object it is stored and shown as. */
    public static String templateJson(TaskTemplate template) {
        ObjectNode node = JSON.createObjectNode();
        node.put("type", template.type());
        if (template.payload() != null) {
            node.set("payload", JSON.readTree(template.payload()));
        }
        node.put("priority", template.priority());
        node.put("maxAttempts", template.maxAttempts());
        node.put("timeoutSeconds", template.timeoutSeconds());
        if (template.concurrencyKey() != null) {
            node.put("concurrencyKey", template.concurrencyKey());
        }
        return ExactJson.text(node);
    }

    static TaskTemplate template(String json) {
        JsonNode node = JSON.readTree(json);
        JsonNode payload = node.get("payload");
        JsonNode concurrencyKey = node.get("concurrencyKey");
        return new TaskTemplate(node.get("type").stringValue(), payload == null ? null : ExactJson.text(payload),
                node.get("priority").intValue(), node.get("maxAttempts").intValue(), node.get("timeoutSeconds").intValue(),
                concurrencyKey == null ? null : concurrencyKey.stringValue());
    }

    private static Schedule toSchedule(Readable row) {
        Schedule.Definition definition = new Schedule.Definition(
                Cron.parse(Objects.requireNonNull(row.get("cron", String.class))),
                ZoneId.of(Objects.requireNonNull(row.get("timezone", String.class))),
                Objects.requireNonNull(row.get("queue", String.class)),
                template(Objects.requireNonNull(JsonbColumn.text(row, "task"))),
                Schedule.Overlap.valueOf(Objects.requireNonNull(row.get("overlap", String.class)).toUpperCase()),
                Schedule.CatchUp.valueOf(Objects.requireNonNull(row.get("catch_up", String.class)).toUpperCase()),
                Boolean.TRUE.equals(row.get("paused", Boolean.class)));
        Instant lastFireAt = row.get("last_fire_at", Instant.class);
        Schedule.LastFire lastFire = lastFireAt == null ? null : new Schedule.LastFire(lastFireAt,
                Objects.requireNonNull(row.get("last_outcome", String.class)), row.get("last_task_id", Long.class));
        return new Schedule(Objects.requireNonNull(row.get("name", String.class)), definition,
                Objects.requireNonNull(row.get("created_at", Instant.class)),
                Objects.requireNonNull(row.get("updated_at", Instant.class)),
                row.get("resumed_at", Instant.class),
                Objects.requireNonNull(row.get("settled_until", Instant.class)),
                lastFire);
    }
}
