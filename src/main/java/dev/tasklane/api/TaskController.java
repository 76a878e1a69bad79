package dev.tasklane.api;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Enqueued;
import dev.tasklane.queue.TaskFilter;
import dev.tasklane.support.StorableText;
import dev.tasklane.queue.TaskState;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.worker.HandlerRegistry;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
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
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** Enqueue, read, list and delete tasks. */
@RestController
@RequestMapping("/api/v1")
class TaskController {

    static final String REPLAYED_HEADER = "Idempotent-Replayed";
    /** The idempotency key as a header (the IETF draft's name), for clients that set it per request. */
    static final String IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
    static final String DEDUPLICATED_HEADER = "Deduplicated";
    static final String DEBOUNCED_HEADER = "Debounced";
    private static final int DEFAULT_PAGE = 50;
    private static final int MAX_PAGE = 500;

    private final TaskStore tasks;
    private final EnqueueRequests requests;
    private final Workers workers;

    TaskController(TaskStore tasks, TasklaneProperties properties, HandlerRegistry handlers, Workers workers) {
        this.tasks = tasks;
        this.requests = new EnqueueRequests(properties.maxPayloadBytes(), properties.taskTimeout(), handlers::validate);
        this.workers = workers;
    }

    /** The list of tasks in a batch response. */
    record TaskList(List<TaskJson> tasks) {
    }

    /** A page of the task list; {@code next} goes back as {@code before}. */
    record TaskPageJson(List<TaskJson> tasks, @Nullable String next) {
    }

    @Operation(operationId = "enqueue",
            summary = "Enqueue a task",
            responses = {
                @ApiResponse(responseCode = "201", description = "Created; Location names the task"),
                @ApiResponse(responseCode = "200", description = "An existing task: with the same idempotency key"
                        + " (Idempotent-Replayed: true), with the same unique key within its scope (Deduplicated: true),"
                        + " or a waiting task with the same debounce key, its payload replaced and its run moved"
                        + " (Debounced: true)")
            })
    @PostMapping("/queues/{queue}/tasks")
    Mono<ResponseEntity<TaskJson>> enqueue(@PathVariable String queue,
            @Parameter(description = "W3C trace context: kept with the task, whose claim and run continue the trace;"
                    + " an invalid one is ignored")
            @RequestHeader(name = "traceparent", required = false) @Nullable String traceparent,
            @Parameter(description = "The idempotency key, instead of idempotencyKey in the body (the same value"
                    + " if both are given): a retry with the same key answers the task the first call made. An"
                    + " answer 503 with \"outcome\": \"unknown\" repeats it")
            @RequestHeader(name = IDEMPOTENCY_KEY_HEADER, required = false) @Nullable String idempotencyKey,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Enqueue.class)))
            @RequestBody JsonNode body) {
        EnqueueRequests.requireQueueName(queue);
        String trace = TraceParents.valid(traceparent);
        String headerKey = IdempotencyKeys.header(idempotencyKey);
        return Mono.fromSupplier(() -> IdempotencyKeys.apply(headerKey, requests.single(body)))
                .flatMap(task -> tasks.enqueueOne(queue, task.tracedBy(trace)))
                .map(result -> {
                    TaskJson json = TaskJson.of(result.task());
                    return switch (result.how()) {
                        case CREATED -> ResponseEntity.created(URI.create("/api/v1/tasks/" + json.id())).body(json);
                        case REPLAYED -> ResponseEntity.ok().header(REPLAYED_HEADER, "true").body(json);
                        case DEDUPLICATED -> ResponseEntity.ok().header(DEDUPLICATED_HEADER, "true").body(json);
                        case DEBOUNCED -> ResponseEntity.ok().header(DEBOUNCED_HEADER, "true").body(json);
                    };
                });
    }

    @Operation(operationId = "enqueueBatch",
            summary = "Enqueue up to 1000 tasks, all or none",
            responses = {
                @ApiResponse(responseCode = "201", description = "At least one task was created"),
                @ApiResponse(responseCode = "200", description = "No task was created: every one was an idempotent"
                        + " replay, deduplicated or debounced (\"deduplicated\": true or \"debounced\": true on the item)")
            })
    @PostMapping("/queues/{queue}/tasks/batch")
    Mono<ResponseEntity<TaskList>> enqueueBatch(@PathVariable String queue,
            @Parameter(description = "W3C trace context: kept with the task, whose claim and run continue the trace;"
                    + " an invalid one is ignored")
            @RequestHeader(name = "traceparent", required = false) @Nullable String traceparent,
            @Parameter(description = "A key for the whole batch: item i without an idempotencyKey of its own gets"
                    + " <key>:<i> (from 0), so that a retry of the same batch with the same key makes nothing twice")
            @RequestHeader(name = IDEMPOTENCY_KEY_HEADER, required = false) @Nullable String idempotencyKey,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Batch.class)))
            @RequestBody JsonNode body) {
        EnqueueRequests.requireQueueName(queue);
        String trace = TraceParents.valid(traceparent);
        String headerKey = IdempotencyKeys.header(idempotencyKey);
        return Mono.fromSupplier(() -> IdempotencyKeys.applyToBatch(headerKey, requests.batch(body)))
                .flatMap(batch -> tasks.enqueue(queue, batch.stream().map(task -> task.tracedBy(trace)).toList()))
                .map(results -> {
                    boolean anyCreated = results.stream().anyMatch(Enqueued::created);
                    TaskList list = new TaskList(results.stream().map(TaskJson::enqueued).toList());
                    return ResponseEntity.status(anyCreated ? HttpStatus.CREATED : HttpStatus.OK).body(list);
                });
    }

    @Operation(operationId = "cancelTask",
            summary = "Cancel a queued or running task",
            responses = {
                @ApiResponse(responseCode = "200", description = "The cancelled task")
            })
    @PostMapping("/tasks/{id}/cancel")
    Mono<TaskJson> cancel(@PathVariable String id) {
        return workers.cancel(TaskIds.parse(id)).map(TaskJson::of);
    }

    @Operation(operationId = "retryTask",
            summary = "Put a failed or cancelled task back in its queue, attempts and snoozes reset",
            responses = {
                @ApiResponse(responseCode = "200", description = "The queued task")
            })
    @PostMapping("/tasks/{id}/retry")
    Mono<TaskJson> retry(@PathVariable String id) {
        return tasks.retry(TaskIds.parse(id)).map(TaskJson::of);
    }

    @Operation(operationId = "getTask",
            summary = "One task",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task")
            })
    @GetMapping("/tasks/{id}")
    Mono<TaskJson> get(@PathVariable String id) {
        return tasks.get(TaskIds.parse(id)).map(TaskJson::of);
    }

    @Operation(operationId = "listTasks",
            summary = "Tasks, newest first, a page at a time",
            responses = {
                @ApiResponse(responseCode = "200", description = "A page; pass next back as before")
            })
    @GetMapping("/tasks")
    Mono<TaskPageJson> list(@RequestParam(required = false) @Nullable String queue,
                            @RequestParam(required = false) @Nullable String state,
                            @RequestParam(required = false) @Nullable String type,
                            @RequestParam(required = false) @Nullable String concurrencyKey,
                            @RequestParam(required = false) @Nullable String schedule,
                            @RequestParam(required = false) @Nullable String limit,
                            @RequestParam(required = false) @Nullable String before) {
        TaskFilter filter = new TaskFilter(matching("queue", emptyToNull(queue), EnqueueRequests.QUEUE_NAME),
                parseState(state), matching("type", emptyToNull(type), EnqueueRequests.TYPE_NAME),
                concurrencyKey(emptyToNull(concurrencyKey)),
                matching("schedule", emptyToNull(schedule), EnqueueRequests.QUEUE_NAME), parseCursor(before),
                parseLimit(limit));
        return tasks.list(filter).map(page -> new TaskPageJson(
                page.tasks().stream().map(TaskJson::of).toList(),
                page.nextBeforeId() == null ? null : encodeCursor(page.nextBeforeId())));
    }

    @Operation(operationId = "deleteTask",
            summary = "Delete a terminal task and its events",
            responses = {
                @ApiResponse(responseCode = "204", description = "Deleted")
            })
    @DeleteMapping("/tasks/{id}")
    Mono<ResponseEntity<Void>> delete(@PathVariable String id) {
        return tasks.delete(TaskIds.parse(id)).thenReturn(ResponseEntity.noContent().build());
    }

    private static @Nullable String emptyToNull(@Nullable String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static @Nullable String concurrencyKey(@Nullable String key) {
        if (key != null && (key.codePointCount(0, key.length()) > EnqueueRequests.MAX_CONCURRENCY_KEY_LENGTH
                || !StorableText.isStorable(key))) {
            throw new InvalidRequestException("concurrencyKey", "must be 1 to "
                    + EnqueueRequests.MAX_CONCURRENCY_KEY_LENGTH + " characters without NUL");
        }
        return key;
    }

    private static @Nullable String matching(String parameter, @Nullable String value, Pattern pattern) {
        if (value != null && !pattern.matcher(value).matches()) {
            throw new InvalidRequestException(parameter, "must match " + pattern.pattern());
        }
        return value;
    }

    private static @Nullable TaskState parseState(@Nullable String state) {
        if (state == null || state.isEmpty()) {
            return null;
        }
        return TaskState.fromWireName(state).orElseThrow(() -> new InvalidRequestException("state",
                "must be one of queued, running, succeeded, failed, cancelled"));
    }

    private static int parseLimit(@Nullable String limit) {
        if (limit == null || limit.isEmpty()) {
            return DEFAULT_PAGE;
        }
        long value;
        try {
            value = Long.parseLong(limit);
        } catch (NumberFormatException e) {
            throw new InvalidRequestException("limit", "must be a whole number within 1.." + MAX_PAGE);
        }
        if (value < 1 || value > MAX_PAGE) {
            throw new InvalidRequestException("limit", "must be within 1.." + MAX_PAGE);
        }
        return (int) value;
    }

    static String encodeCursor(long beforeId) {
        return Base64.getUrlEncoder().withoutPadding()
                .encodeToString(("before:" + beforeId).getBytes(StandardCharsets.UTF_8));
    }

    private static @Nullable Long parseCursor(@Nullable String cursor) {
        if (cursor == null || cursor.isEmpty()) {
            return null;
        }
        try {
            String decoded = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            if (decoded.startsWith("before:")) {
                return Long.parseLong(decoded.substring("before:".length()));
            }
        } catch (IllegalArgumentException e) {
            // reported below, like any other cursor this service did not hand out
        }
        throw new InvalidRequestException("before", "is not a cursor this service handed out as next");
    }
}
