package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Claim;
import dev.tasklane.support.ExactJson;
import dev.tasklane.support.StorableText;
import dev.tasklane.worker.PullWorkers;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** The pull API for external workers: claim (with long polling), heartbeat, progress, complete, fail, snooze, release. */
@RestController
@RequestMapping("/api/v1")
class ClaimController {

    private static final int MAX_WORKER_ID = 200;
    private static final int MAX_MESSAGE = 1000;
    private static final int MAX_ERROR = 10_000;
    private static final long MAX_SNOOZE_SECONDS = 31_536_000;
    /** Never drawn as a lease id (they are random), so it matches no lease. */
    private static final UUID NO_LEASE = new UUID(0, 0);
    /** What a release says when its worker gives no reason. */
    private static final String DEFAULT_RELEASE_REASON = "handed back by its worker";

    private final PullWorkers pull;
    private final long maxResultBytes;

    ClaimController(PullWorkers pull, TasklaneProperties properties) {
        this.pull = pull;
        this.maxResultBytes = properties.maxPayloadBytes();
    }

    @Operation(operationId = "claim",
            summary = "Claim tasks for an external worker, optionally long-polling",
            responses = {
                @ApiResponse(responseCode = "200", description = "The claimed tasks, running under this worker's lease; [] if none")
            })
    @PostMapping("/queues/{queue}/claims")
    Mono<TaskController.TaskList> claim(@PathVariable String queue,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Claim.class)))
            @RequestBody JsonNode body) {
        EnqueueRequests.requireQueueName(queue);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        long max = fields.integer("max", 1, 100).orElse(1L);
        long leaseSeconds = fields.integer("leaseSeconds", 1, 43_200).orElse(30L);
        long waitSeconds = fields.integer("waitSeconds", 0, 30).orElse(0L);
        Set<String> types = types(fields);
        failOn(errors);
        Claim claim = new Claim(queue, workerId.orElseThrow(), (int) max, Duration.ofSeconds(leaseSeconds), types);
        return pull.claim(claim, Duration.ofSeconds(waitSeconds))
                .map(tasks -> new TaskController.TaskList(tasks.stream().map(TaskJson::claimed).toList()));
    }

    @Operation(operationId = "heartbeat",
            summary = "Extend the lease of a claimed task",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task")
            })
    @PostMapping("/tasks/{id}/heartbeat")
    Mono<TaskJson> heartbeat(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Heartbeat.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        UUID leaseId = leaseId(fields);
        long leaseSeconds = fields.integer("leaseSeconds", 1, 43_200).orElse(30L);
        failOn(errors);
        return pull.heartbeat(taskId, workerId.orElseThrow(), leaseId, Duration.ofSeconds(leaseSeconds))
                .map(TaskJson::claimed);
    }

    @Operation(operationId = "reportProgress",
            summary = "Report progress of a claimed task",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task")
            })
    @PostMapping("/tasks/{id}/progress")
    Mono<TaskJson> progress(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Progress.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        UUID leaseId = leaseId(fields);
        Integer percent = fields.integer("percent", 0, 100).map(Long::intValue).orElse(null);
        String message = fields.string("message").orElse(null);
        if (message != null && (message.codePointCount(0, message.length()) > MAX_MESSAGE
                || !StorableText.isStorable(message))) {
            fields.invalid("message", "must be at most " + MAX_MESSAGE + " characters of valid Unicode without NUL");
        }
        failOn(errors);
        return pull.progress(taskId, workerId.orElseThrow(), leaseId, percent, message).map(TaskJson::claimed);
    }

    @Operation(operationId = "complete",
            summary = "Finish a claimed task successfully",
            responses = {
                @ApiResponse(responseCode = "200", description = "The succeeded task")
            })
    @PostMapping("/tasks/{id}/complete")
    Mono<TaskJson> complete(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Complete.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        UUID leaseId = leaseId(fields);
        String result = fields.raw("result").map(value -> resultText(fields, value)).orElse(null);
        failOn(errors);
        return pull.complete(taskId, workerId.orElseThrow(), leaseId, result).map(TaskJson::of);
    }

    @Operation(operationId = "fail",
            summary = "Fail a claimed task: retried with backoff, or failed",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task, queued again or failed")
            })
    @PostMapping("/tasks/{id}/fail")
    Mono<TaskJson> fail(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Fail.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        UUID leaseId = leaseId(fields);
        Optional<String> error = fields.requiredText("error", MAX_ERROR);
        boolean retry = fields.bool("retry").orElse(true);
        failOn(errors);
        return pull.fail(taskId, workerId.orElseThrow(), leaseId, error.orElseThrow(), retry).map(TaskJson::of);
    }

    @Operation(operationId = "snooze",
            summary = "Snooze a claimed task: queued again after delaySeconds, the attempt not counted",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task, queued again (or failed past maxSnoozes)")
            })
    @PostMapping("/tasks/{id}/snooze")
    Mono<TaskJson> snooze(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Snooze.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        UUID leaseId = leaseId(fields);
        if (!fields.has("delaySeconds")) {
            fields.invalid("delaySeconds", "is required");
        }
        long delaySeconds = fields.integer("delaySeconds", 0, MAX_SNOOZE_SECONDS).orElse(0L);
        failOn(errors);
        return pull.snooze(taskId, workerId.orElseThrow(), leaseId, Duration.ofSeconds(delaySeconds)).map(TaskJson::of);
    }

    @Operation(operationId = "release",
            summary = "Hand a claimed task back: queued again at once, counting neither the attempt nor a snooze",
            responses = {
                @ApiResponse(responseCode = "200", description = "The task, queued again")
            })
    @PostMapping("/tasks/{id}/release")
    Mono<TaskJson> release(@PathVariable String id,
            @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true,
                    content = @Content(schema = @Schema(implementation = ApiSchemas.Release.class)))
            @RequestBody JsonNode body) {
        long taskId = TaskIds.parse(id);
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<String> workerId = fields.requiredText("workerId", MAX_WORKER_ID);
        // Required here, unlike the other calls: a hand-back names the one attempt it gives up,
        // never whichever lease the worker id happens to hold.
        if (!fields.has("leaseId")) {
            fields.invalid("leaseId", "is required");
        }
        UUID leaseId = leaseId(fields);
        String reason = fields.text("reason", MAX_MESSAGE).orElse(DEFAULT_RELEASE_REASON);
        failOn(errors);
        return pull.release(taskId, workerId.orElseThrow(), Objects.requireNonNull(leaseId), reason).map(TaskJson::of);
    }

    private @Nullable String resultText(JsonFields fields, JsonNode value) {
        String unstorable = StorableText.unstorable(value);
        if (unstorable != null) {
            fields.invalid("result", unstorable);
            return null;
        }
        String text = ExactJson.text(value);
        long bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxResultBytes) {
            throw new PayloadTooLargeException("result is " + bytes + " bytes; the limit is " + maxResultBytes);
        }
        return text;
    }

    /**
     * The lease a call names, if it names one. A string that is no lease id this service hands
     * out names no lease a worker holds: the call is refused as for any stale lease (409).
     */
    private static @Nullable UUID leaseId(JsonFields fields) {
        return fields.string("leaseId").map(text -> {
            try {
                return UUID.fromString(text);
            } catch (IllegalArgumentException e) {
                return NO_LEASE;
            }
        }).orElse(null);
    }

    private static Set<String> types(JsonFields fields) {
        Set<String> types = new LinkedHashSet<>();
        fields.array("types").ifPresent(array -> {
            if (array.size() > Claim.MAX_TYPES) {
                fields.invalid("types", "must name at most " + Claim.MAX_TYPES + " task types");
                return;
            }
            for (int i = 0; i < array.size(); i++) {
                JsonNode type = array.get(i);
                if (!type.isString()) {
                    throw new MalformedRequestException(fields.path("types[" + i + "]"), "must be a string");
                }
                if (!EnqueueRequests.TYPE_NAME.matcher(type.stringValue()).matches()) {
                    fields.invalid("types[" + i + "]", "must match " + EnqueueRequests.TYPE_NAME.pattern());
                } else {
                    types.add(type.stringValue());
                }
            }
        });
        return types;
    }

    private static void failOn(List<FieldError> errors) {
        if (!errors.isEmpty()) {
            throw new InvalidRequestException(errors);
        }
    }
}
