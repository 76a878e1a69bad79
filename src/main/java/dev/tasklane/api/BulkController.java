package dev.tasklane.api;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.tasklane.queue.BulkSelection;
import dev.tasklane.queue.TaskState;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.worker.Workers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Bulk actions: retry, cancel or delete the tasks that some ids or a queue's filter select, in
 * batches of short transactions, leaving alone those in states the action does not apply to.
 * Redriving a queue's failed tasks after an outage is one call.
 */
@RestController
@RequestMapping("/api/v1")
class BulkController {

    private static final Set<String> FIELDS = Set.of("ids", "queue", "state", "type", "concurrencyKey", "schedule",
            "createdBefore", "limit");
    private static final Set<String> FILTER = Set.of("queue", "state", "type", "concurrencyKey", "schedule",
            "createdBefore");

    private final TaskStore store;
    private final Workers workers;

    BulkController(TaskStore store, Workers workers) {
        this.store = store;
        this.workers = workers;
    }

    /** What a bulk action did: tasks changed, and tasks looked at but left alone (or unknown ids). */
    record BulkResult(long count, long skipped) {
    }

    @Operation(operationId = "retryTasks",
            summary = "Retry the failed and cancelled tasks that ids or a queue's filter select",
            description = "Each starts afresh, as a single retry does: queued now, attempts and snoozes reset.",
            responses = {
                @ApiResponse(responseCode = "200", description = "How many were retried and skipped")
            })
    @PostMapping("/tasks/retry")
    Mono<BulkResult> retry(@io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
            content = @Content(schema = @Schema(implementation = ApiSchemas.BulkRequest.class))) @RequestBody JsonNode body) {
        return run(read(body), batch -> store.retryMany(batch).map(List::size));
    }

    @Operation(operationId = "cancelTasks",
            summary = "Cancel the queued and running tasks that ids or a queue's filter select",
            responses = {
                @ApiResponse(responseCode = "200", description = "How many were cancelled and skipped")
            })
    @PostMapping("/tasks/cancel")
    Mono<BulkResult> cancel(@io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
            content = @Content(schema = @Schema(implementation = ApiSchemas.BulkRequest.class))) @RequestBody JsonNode body) {
        return run(read(body), workers::cancelMany);
    }

    @Operation(operationId = "deleteTasks",
            summary = "Delete the terminal tasks that ids or a queue's filter select",
            responses = {
                @ApiResponse(responseCode = "200", description = "How many were deleted and skipped")
            })
    @PostMapping("/tasks/delete")
    Mono<BulkResult> delete(@io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
            content = @Content(schema = @Schema(implementation = ApiSchemas.BulkRequest.class))) @RequestBody JsonNode body) {
        return run(read(body), batch -> store.deleteMany(batch).map(Long::intValue));
    }

    /** One batch after the other, each its own statement; what one batch changed stays changed. */
    private Mono<BulkResult> run(BulkSelection selection, Function<List<Long>, Mono<Integer>> action) {
        return store.bulkBatches(selection)
                .concatMap(batch -> action.apply(batch).map(changed -> Map.entry(changed, batch.size())))
                .reduce(new BulkResult(0, 0), (result, batch) -> new BulkResult(result.count() + batch.getKey(),
                        result.skipped() + batch.getValue() - batch.getKey()));
    }

    private static BulkSelection read(JsonNode body) {
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        body.properties().forEach(field -> {
            if (!FIELDS.contains(field.getKey())) {
                errors.add(new FieldError(field.getKey(), "is not a field of a bulk action (ids, or queue with state,"
                        + " type, concurrencyKey, schedule, createdBefore; and limit)"));
            }
        });
        List<Long> ids = ids(fields, body, errors);
        String queue = fields.text("queue", 64).orElse(null);
        if (queue != null && !EnqueueRequests.QUEUE_NAME.matcher(queue).matches()) {
            fields.invalid("queue", "must match " + EnqueueRequests.QUEUE_NAME.pattern());
        }
        TaskState state = fields.string("state").map(name -> TaskState.fromWireName(name).orElseGet(() -> {
            fields.invalid("state", "must be one of queued, running, succeeded, failed, cancelled");
            return null;
        })).orElse(null);
        String type = fields.text("type", 128).orElse(null);
        if (type != null && !EnqueueRequests.isTypeName(type)) {
            fields.invalid("type", "must match " + EnqueueRequests.TYPE_NAME.pattern());
        }
        String concurrencyKey = fields.text("concurrencyKey", EnqueueRequests.MAX_CONCURRENCY_KEY_LENGTH).orElse(null);
        String schedule = fields.text("schedule", 64).orElse(null);
        if (schedule != null && !EnqueueRequests.QUEUE_NAME.matcher(schedule).matches()) {
            fields.invalid("schedule", "must match " + EnqueueRequests.QUEUE_NAME.pattern());
        }
        Instant createdBefore = fields.timestamp("createdBefore").orElse(null);
        int limit = fields.integer("limit", 1, BulkSelection.MAX_LIMIT).orElse((long) BulkSelection.MAX_LIMIT).intValue();
        boolean filtered = FILTER.stream().anyMatch(fields::has);
        if (!ids.isEmpty() && filtered) {
            fields.invalid("ids", "give ids or a filter (queue, ...), not both");
        } else if (ids.isEmpty() && !fields.has("ids") && !fields.has("queue")) {
            fields.invalid("queue", "is required unless ids are given");
        }
        if (!errors.isEmpty()) {
            throw new InvalidRequestException(errors);
        }
        return new BulkSelection(ids, ids.isEmpty() ? queue : null, state, type, concurrencyKey, schedule, createdBefore,
                limit);
    }

    private static List<Long> ids(JsonFields fields, JsonNode body, List<FieldError> errors) {
        if (!fields.has("ids")) {
            return List.of();
        }
        JsonNode ids = body.get("ids");
        if (!ids.isArray()) {
            throw new MalformedRequestException("ids", "must be an array of task ids");
        }
        if (ids.isEmpty() || ids.size() > BulkSelection.MAX_IDS) {
            fields.invalid("ids", "must hold 1 to " + BulkSelection.MAX_IDS + " task ids");
            return List.of();
        }
        List<Long> read = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            JsonNode id = ids.get(i);
            if (!id.isIntegralNumber()) {
                throw new MalformedRequestException("ids[" + i + "]", "must be a whole number");
            }
            if (!id.canConvertToLong() || id.longValue() < 1) {
                errors.add(new FieldError("ids[" + i + "]", "must be a task id (a positive whole number)"));
            } else {
                read.add(id.longValue());
            }
        }
        return read.size() == ids.size() ? read : List.of();
    }
}
