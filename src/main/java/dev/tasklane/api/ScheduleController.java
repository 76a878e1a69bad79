package dev.tasklane.api;

import java.net.URI;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.NewTask;
import dev.tasklane.schedule.Cron;
import dev.tasklane.schedule.Schedule;
import dev.tasklane.schedule.ScheduleStore;
import dev.tasklane.schedule.TaskTemplate;
import dev.tasklane.support.ExactJson;
import dev.tasklane.support.WireTime;
import dev.tasklane.worker.HandlerRegistry;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Cron schedules: create or replace, read, delete, pause, resume, trigger. Each call takes its
 * now from the database's clock, as the scheduler does: on a replica whose clock ran ahead, a
 * created or resumed schedule would count the fire times up to that replica's now as settled,
 * and they would never be made.
 */
@RestController
@RequestMapping("/api/v1/schedules")
class ScheduleController {

    /** How many coming fire times a schedule shows. */
    static final int NEXT_RUNS = 5;

    private static final Set<String> FIELDS = Set.of("cron", "timezone", "queue", "task", "overlap", "catchUp", "paused");

    private static final JsonMapper JSON = ExactJson.MAPPER;

    private final ScheduleStore schedules;
    private final EnqueueRequests requests;

    ScheduleController(ScheduleStore schedules, TasklaneProperties properties, HandlerRegistry handlers) {
        this.schedules = schedules;
        this.requests = new EnqueueRequests(properties.maxPayloadBytes(), properties.taskTimeout(), handlers::validate);
    }

    /** A schedule as the API shows it. */
    record ScheduleJson(String name, String cron, String timezone, String queue,
                        @Schema(implementation = ApiSchemas.ScheduleTask.class) JsonNode task,
                        String overlap, String catchUp, boolean paused, String createdAt, String updatedAt,
                        @Nullable String resumedAt,
                        @Schema(description = "The next 5 fire times") List<String> nextRuns,
                        @Nullable LastFireJson lastFire) {

        static ScheduleJson of(Schedule schedule, Instant now) {
            Schedule.Definition definition = schedule.definition();
            Schedule.LastFire last = schedule.lastFire();
            return new ScheduleJson(schedule.name(), definition.cron().text(), definition.timezone().getId(),
                    definition.queue(), templateJson(definition.task()), definition.overlap().wireName(),
                    definition.catchUp().wireName(), definition.paused(), WireTime.format(schedule.createdAt()),
                    WireTime.format(schedule.updatedAt()), WireTime.format(schedule.resumedAt()),
                    schedule.nextRuns(now, NEXT_RUNS).stream().map(WireTime::format).toList(),
                    last == null ? null : new LastFireJson(WireTime.format(last.at()), last.outcome(), last.taskId()));
        }
    }

    /** The newest fire time the schedule settled, and what became of it. */
    record LastFireJson(String at, @Schema(allowableValues = {"enqueued", "skipped"}) String outcome,
                        @Nullable Long taskId) {
    }

    record ScheduleList(List<ScheduleJson> schedules) {
    }

    @Operation(operationId = "putSchedule", summary = "Create or replace a schedule",
            responses = {
                @ApiResponse(responseCode = "201", description = "Created"),
                @ApiResponse(responseCode = "200", description = "Replaced; missed fire times count from now")
            })
    @PutMapping("/{name}")
    Mono<ResponseEntity<ScheduleJson>> put(@PathVariable String name,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.SchedulePut.class)))
            @RequestBody JsonNode body) {
        requireName(name);
        return Mono.fromSupplier(() -> read(body))
                .flatMap(definition -> schedules.now().flatMap(now -> schedules.put(name, definition, now)
                        .flatMap(created -> schedules.find(name)
                                .map(schedule -> ScheduleJson.of(schedule, now))
                                .map(json -> created
                                        ? ResponseEntity.created(URI.create("/api/v1/schedules/" + name)).body(json)
                                        : ResponseEntity.ok(json)))));
    }

    @Operation(operationId = "listSchedules", summary = "Every schedule, by name",
            responses = @ApiResponse(responseCode = "200", description = "The schedules"))
    @GetMapping
    Mono<ScheduleList> list() {
        return schedules.now().flatMap(now -> schedules.list().map(schedule -> ScheduleJson.of(schedule, now))
                .collectList().map(ScheduleList::new));
    }

    @Operation(operationId = "getSchedule", summary = "A schedule with its next 5 fire times",
            responses = @ApiResponse(responseCode = "200", description = "The schedule"))
    @GetMapping("/{name}")
    Mono<ScheduleJson> get(@PathVariable String name) {
        requireName(name);
        return schedules.now().flatMap(now -> existing(name).map(schedule -> ScheduleJson.of(schedule, now)));
    }

    @Operation(operationId = "deleteSchedule", summary = "Delete a schedule; its tasks stay",
            responses = @ApiResponse(responseCode = "204", description = "Deleted"))
    @DeleteMapping("/{name}")
    Mono<ResponseEntity<Void>> delete(@PathVariable String name) {
        requireName(name);
        return schedules.delete(name).flatMap(existed -> existed ? Mono.just(ResponseEntity.noContent().<Void>build())
                : Mono.error(new NotFoundException("Schedule not found", "no schedule " + name)));
    }

    @Operation(operationId = "pauseSchedule", summary = "Stop making tasks until resumed",
            responses = @ApiResponse(responseCode = "200", description = "The paused schedule"))
    @PostMapping("/{name}/pause")
    Mono<ScheduleJson> pause(@PathVariable String name) {
        requireName(name);
        return orNotFound(name, schedules.pause(name))
                .flatMap(schedule -> schedules.now().map(now -> ScheduleJson.of(schedule, now)));
    }

    @Operation(operationId = "resumeSchedule", summary = "Make tasks again; fire times missed while paused are not made up for",
            responses = @ApiResponse(responseCode = "200", description = "The resumed schedule"))
    @PostMapping("/{name}/resume")
    Mono<ScheduleJson> resume(@PathVariable String name) {
        requireName(name);
        return schedules.now().flatMap(now -> orNotFound(name, schedules.resume(name, now))
                .map(schedule -> ScheduleJson.of(schedule, now)));
    }

    @Operation(operationId = "triggerSchedule", summary = "Make one task now, whatever overlap says",
            responses = @ApiResponse(responseCode = "201", description = "The task; Location names it"))
    @PostMapping("/{name}/trigger")
    Mono<ResponseEntity<TaskJson>> trigger(@PathVariable String name) {
        requireName(name);
        return existing(name).flatMap(schedule -> schedules.now().flatMap(now -> schedules.trigger(schedule, now)))
                .map(task -> ResponseEntity.status(HttpStatus.CREATED)
                        .location(URI.create("/api/v1/tasks/" + task.id())).body(TaskJson.of(task)));
    }

    private Mono<Schedule> existing(String name) {
        return orNotFound(name, schedules.find(name));
    }

    private static Mono<Schedule> orNotFound(String name, Mono<Schedule> schedule) {
        return schedule.switchIfEmpty(Mono.error(() -> new NotFoundException("Schedule not found", "no schedule " + name)));
    }

    private static void requireName(String name) {
        if (!EnqueueRequests.QUEUE_NAME.matcher(name).matches()) {
            throw new InvalidRequestException("name", "must match " + EnqueueRequests.QUEUE_NAME.pattern()
                    + " (1 to 64 characters)");
        }
    }

    private Schedule.Definition read(JsonNode body) {
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        body.properties().forEach(field -> {
            if (!FIELDS.contains(field.getKey())) {
                errors.add(new FieldError(field.getKey(), "is not a field of a schedule (cron, timezone, queue, task,"
                        + " overlap, catchUp, paused)"));
            }
        });
        Cron cron = fields.requiredText("cron", 200).map(text -> {
            try {
                return Cron.parse(text);
            } catch (IllegalArgumentException e) {
                fields.invalid("cron", e.getMessage());
                return null;
            }
        }).orElse(null);
        ZoneId zone = fields.text("timezone", 100).map(id -> {
            try {
                return ZoneId.of(id);
            } catch (DateTimeException e) {
                fields.invalid("timezone", "is not a known time zone (an IANA name like Europe/Berlin, or UTC)");
                return null;
            }
        }).orElse(fields.has("timezone") ? null : ZoneId.of("UTC"));
        String queue = fields.requiredText("queue", 64).orElse(null);
        if (queue != null && !EnqueueRequests.QUEUE_NAME.matcher(queue).matches()) {
            fields.invalid("queue", "must match " + EnqueueRequests.QUEUE_NAME.pattern());
        }
        NewTask task = null;
        if (!fields.has("task")) {
            fields.invalid("task", "is required");
        } else {
            JsonFields template = fields.object("task").orElseThrow();
            task = requests.template(template, body.get("task"));
        }
        Schedule.Overlap overlap = choice(fields, "overlap", Schedule.Overlap.class, Schedule.Overlap.ALLOW);
        Schedule.CatchUp catchUp = choice(fields, "catchUp", Schedule.CatchUp.class, Schedule.CatchUp.NONE);
        boolean paused = fields.bool("paused").orElse(false);
        if (!errors.isEmpty()) {
            throw new InvalidRequestException(errors);
        }
        return new Schedule.Definition(cron, zone, queue, new TaskTemplate(task.type(), task.payload(), task.priority(),
                task.maxAttempts(), task.timeoutSeconds(), task.concurrencyKey()), overlap, catchUp, paused);
    }

    private static <E extends Enum<E>> E choice(JsonFields fields, String field, Class<E> type, E fallback) {
        Optional<String> name = fields.string(field);
        if (name.isEmpty()) {
            return fallback;
        }
        for (E value : type.getEnumConstants()) {
            if (value.name().toLowerCase(Locale.ROOT).equals(name.get())) {
                return value;
            }
        }
        List<String> names = java.util.Arrays.stream(type.getEnumConstants())
                .map(value -> value.name().toLowerCase(Locale.ROOT)).toList();
        fields.invalid(field, "must be one of " + String.join(", ", names));
        return fallback;
    }

    private static JsonNode templateJson(TaskTemplate template) {
        return JSON.readTree(ScheduleStore.templateJson(template));
    }
}
