package dev.tasklane.api;

import java.util.List;

import io.swagger.v3.oas.annotations.media.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Request bodies as the OpenAPI document describes them. The controllers read requests as JSON
 * trees by the contract's own rules ({@link EnqueueRequests}, {@link JsonFields}); these records
 * only document the shapes those rules accept.
 */
final class ApiSchemas {

    /** How payloads and results are kept, said wherever one is sent. */
    static final String EXACT_JSON = "Kept as PostgreSQL's jsonb keeps it: numbers exactly as sent (never rounded"
            + " through a double), at most 1,000 digits before and after the decimal point (422 beyond); at most"
            + " TASKLANE_MAX_PAYLOAD_BYTES (256 KiB) with its numbers written out (413 beyond).";

    private ApiSchemas() {
    }

    @Schema(name = "EnqueueRequest", description = "One task to enqueue")
    record Enqueue(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, pattern = "^[A-Za-z0-9_.:-]{1,128}$",
                    example = "sleep") String type,
            @Schema(description = "Any JSON value, handed to the handler as is. " + ApiSchemas.EXACT_JSON,
                    example = "{\"durationMs\": 500}")
            @Nullable Object payload,
            @Schema(minimum = "-100", maximum = "100", defaultValue = "0", description = "Higher runs first")
            @Nullable Integer priority,
            @Schema(format = "date-time", description = "Not before this time (years 1 to 9999 in UTC); or give delaySeconds")
            @Nullable String runAt,
            @Schema(minimum = "0", description = "Not before this many seconds from now; or give runAt")
            @Nullable Long delaySeconds,
            @Schema(minimum = "1", maximum = "100", defaultValue = "5") @Nullable Integer maxAttempts,
            @Schema(minLength = 1, maxLength = 200,
                    description = "The same key on the same queue returns the existing task (200, Idempotent-Replayed)")
            @Nullable String idempotencyKey,
            @Schema(minimum = "1", maximum = "604800",
                    description = "How long one attempt may run; default TASKLANE_TASK_TIMEOUT (2h). At the deadline"
                            + " the attempt fails as retryable with 'timed out after Ns'")
            @Nullable Integer timeoutSeconds,
            @Schema(minLength = 1, maxLength = 128,
                    description = "The task's group for its queue's flow control (maxRunningPerKey, ratePerKey,"
                            + " round-robin): a tenant, a customer. Tasks without one form one group of their own")
            @Nullable String concurrencyKey,
            @Schema(minimum = "0", maximum = "10000", defaultValue = "100",
                    description = "How often the task may snooze; past that a snooze fails the attempt")
            @Nullable Integer maxSnoozes,
            @Schema(description = "Answer with an existing task of the queue with the same key instead of making"
                    + " one (200, Deduplicated: true); checked after idempotencyKey; not with debounce")
            @Nullable Unique unique,
            @Schema(description = "Fold enqueues with the same key into the task that still waits: not with"
                    + " unique, runAt or delaySeconds")
            @Nullable Debounce debounce) {
    }

    @Schema(name = "UniqueOptions")
    record Unique(
            @Schema(minLength = 1, maxLength = 200,
                    description = "Default: a hash of type and payload (key order and spacing do not matter)")
            @Nullable String key,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, allowableValues = {"waiting", "active", "window"},
                    description = "waiting: a task with the key that has not started yet; active: one that is not"
                            + " terminal; window: one created in the last windowSeconds")
            String scope,
            @Schema(minimum = "1", maximum = "31536000", description = "Required with scope window, only then")
            @Nullable Long windowSeconds) {
    }

    @Schema(name = "DebounceOptions")
    record Debounce(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minLength = 1, maxLength = 200) String key,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minimum = "0", maximum = "31536000",
                    description = "The task runs this long after the latest enqueue with the key")
            long delaySeconds,
            @Schema(minimum = "0", maximum = "31536000",
                    description = "But never later than this long after the first; not less than delaySeconds")
            @Nullable Long maxDelaySeconds) {
    }

    @Schema(name = "ScheduleTask", description = "The task each fire time makes")
    record ScheduleTask(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, pattern = "^[A-Za-z0-9_.:-]{1,128}$") String type,
            @Schema(description = "Any JSON value. " + ApiSchemas.EXACT_JSON) @Nullable Object payload,
            @Schema(minimum = "-100", maximum = "100", defaultValue = "0") @Nullable Integer priority,
            @Schema(minimum = "1", maximum = "100", defaultValue = "5") @Nullable Integer maxAttempts,
            @Schema(minimum = "1", maximum = "604800") @Nullable Integer timeoutSeconds,
            @Schema(minLength = 1, maxLength = 128) @Nullable String concurrencyKey) {
    }

    @Schema(name = "SchedulePutRequest", description = "A cron schedule")
    record SchedulePut(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, example = "*/5 * * * *",
                    description = "5 fields (minute hour day-of-month month day-of-week) with Vixie semantics, or"
                            + " @yearly, @monthly, @weekly, @daily, @hourly")
            String cron,
            @Schema(defaultValue = "UTC", example = "Europe/Berlin", description = "An IANA time zone") @Nullable String timezone,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, pattern = "^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$")
            String queue,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) ScheduleTask task,
            @Schema(allowableValues = {"allow", "skip"}, defaultValue = "allow",
                    description = "skip: no task while the schedule's previous task is not terminal")
            @Nullable String overlap,
            @Schema(allowableValues = {"none", "latest", "all"}, defaultValue = "none",
                    description = "Fire times missed while no replica ran: none, the latest one, or all (at most 100)")
            @Nullable String catchUp,
            @Schema(defaultValue = "false") @Nullable Boolean paused) {
    }

    @Schema(name = "BatchEnqueueRequest", description = "Up to 1000 tasks, all enqueued or none")
    record Batch(@Schema(requiredMode = Schema.RequiredMode.REQUIRED) @io.swagger.v3.oas.annotations.media.ArraySchema(
            minItems = 1, maxItems = 1000) List<Enqueue> tasks) {
    }

    @Schema(name = "ClaimRequest")
    record Claim(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minLength = 1, maxLength = 200) String workerId,
            @Schema(minimum = "1", maximum = "100", defaultValue = "1") @Nullable Integer max,
            @Schema(minimum = "1", maximum = "43200", defaultValue = "30") @Nullable Integer leaseSeconds,
            @Schema(minimum = "0", maximum = "30", defaultValue = "0",
                    description = "Long poll: answer as soon as a task can be claimed, else [] at the deadline")
            @Nullable Integer waitSeconds,
            @Schema(description = "Only these task types (at most 100)") @Nullable List<String> types) {
    }

    @Schema(name = "HeartbeatRequest")
    record Heartbeat(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(description = "The leaseId the claim handed out: act only on that lease (409 when stale)")
            @Nullable String leaseId,
            @Schema(minimum = "1", maximum = "43200", defaultValue = "30") @Nullable Integer leaseSeconds) {
    }

    @Schema(name = "ProgressRequest")
    record Progress(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(description = "The leaseId the claim handed out: act only on that lease (409 when stale)")
            @Nullable String leaseId,
            @Schema(minimum = "0", maximum = "100") @Nullable Integer percent,
            @Schema(maxLength = 1000) @Nullable String message) {
    }

    @Schema(name = "CompleteRequest")
    record Complete(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(description = "The leaseId the claim handed out: act only on that lease (409 when stale)")
            @Nullable String leaseId,
            @Schema(description = "Any JSON value. " + ApiSchemas.EXACT_JSON) @Nullable Object result) {
    }

    @Schema(name = "FailRequest")
    record Fail(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(description = "The leaseId the claim handed out: act only on that lease (409 when stale)")
            @Nullable String leaseId,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String error,
            @Schema(defaultValue = "true", description = "false fails the task whatever attempts are left")
            @Nullable Boolean retry) {
    }

    @Schema(name = "SnoozeRequest")
    record Snooze(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(description = "The leaseId the claim handed out: act only on that lease (409 when stale)")
            @Nullable String leaseId,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minimum = "0", maximum = "31536000",
                    description = "Run again after this long; the attempt is not counted (past maxSnoozes it fails"
                            + " as retryable with 'snoozed too often')")
            long delaySeconds) {
    }

    @Schema(name = "ReleaseRequest")
    record Release(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED) String workerId,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED,
                    description = "The leaseId the claim handed out: only that lease is released (409 when stale)")
            String leaseId,
            @Schema(minLength = 1, maxLength = 1000, defaultValue = "handed back by its worker",
                    description = "Why; the task's queued event and lastError say 'released: <reason>'")
            @Nullable String reason) {
    }

    @Schema(name = "Problem", description = "RFC 9457 problem details")
    record Problem(
            @Schema(example = "about:blank") String type,
            String title,
            int status,
            String detail,
            @Schema(description = "Each invalid field, for 422") @Nullable List<FieldError> errors,
            @Schema(description = "The task's current state, for 409") @Nullable String state,
            @Schema(description = "\"unknown\" on a 503 whose change may or may not have been made (the database"
                    + " did not answer within the statement timeout): retry only with the same idempotency key",
                    allowableValues = "unknown") @Nullable String outcome) {
    }

    /** {@code PATCH /queues/{queue}}: a JSON merge patch of the queue's flow control; null clears a setting. */
    @Schema(name = "QueuePatch")
    record QueuePatch(
            @Schema(minimum = "1", maximum = "1000000", nullable = true,
                    description = "Tasks running at once on the queue, across all replicas and pull workers")
            @Nullable Integer maxRunning,
            @Schema(minimum = "1", maximum = "1000000", nullable = true,
                    description = "Tasks running at once per concurrencyKey")
            @Nullable Integer maxRunningPerKey,
            @Schema(nullable = true, description = "At most count claims start in any window of periodSeconds"
                    + " (sliding), across the cluster")
            @Nullable RateLimit rate,
            @Schema(nullable = true, description = "The same per concurrencyKey")
            @Nullable RateLimit ratePerKey,
            @Schema(allowableValues = {"fifo", "round-robin"}, nullable = true,
                    description = "fifo: priority, runAt, id across the queue; round-robin: keys with due tasks take"
                            + " turns, each key in priority, runAt, id order")
            @Nullable String fairness) {
    }

    /** A sliding-window rate limit. */
    @Schema(name = "RateLimit")
    record RateLimit(
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minimum = "1", maximum = "1000000") int count,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, minimum = "1", maximum = "1000000") int periodSeconds) {
    }

    /** {@code POST /tasks/retry}, {@code /cancel}, {@code /delete}: ids, or a queue's filter. */
    @Schema(name = "BulkRequest", description = "Give ids, or a filter with queue; not both")
    record BulkRequest(
            @Schema(description = "1..1000 task ids") @Nullable List<Long> ids,
            @Schema(description = "The queue a filter reads (required without ids)") @Nullable String queue,
            @Schema(allowableValues = {"queued", "running", "succeeded", "failed", "cancelled"}) @Nullable String state,
            @Nullable String type,
            @Schema(minLength = 1, maxLength = 128) @Nullable String concurrencyKey,
            @Schema(description = "Only tasks made by this schedule") @Nullable String schedule,
            @Schema(format = "date-time", description = "Only tasks created before this (years 1 to 9999 in UTC)") @Nullable String createdBefore,
            @Schema(minimum = "1", maximum = "100000", defaultValue = "100000",
                    description = "The most tasks the action looks at") @Nullable Integer limit) {
    }
}
