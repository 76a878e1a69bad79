package dev.tasklane.api;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.regex.Pattern;

import dev.tasklane.queue.DeclaredQueues;
import dev.tasklane.queue.NewTask;
import dev.tasklane.support.ExactJson;
import dev.tasklane.support.StorableText;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.NullNode;

/**
 * Turns enqueue bodies into {@link NewTask}s, enforcing every rule of the contract: types and
 * ranges, the payload limit, and that PostgreSQL can store what it is given.
 */
final class EnqueueRequests {

    static final Pattern QUEUE_NAME = DeclaredQueues.QUEUE_NAME;
    static final Pattern TYPE_NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    static final int MAX_BATCH = 1000;
    static final int MAX_KEY_LENGTH = 200;
    static final int MAX_CONCURRENCY_KEY_LENGTH = 128;

    /** Far enough for any schedule, near enough that every timestamp stays representable. */
    private static final BigDecimal MAX_DELAY_SECONDS = BigDecimal.valueOf(100L * 366 * 24 * 3600);

    private final long maxPayloadBytes;
    private final int defaultTimeoutSeconds;
    private final BiFunction<String, JsonNode, List<String>> payloadRules;

    /**
     * @param maxPayloadBytes the payload limit
     * @param defaultTimeout what an enqueue without {@code timeoutSeconds} stores ({@code TASKLANE_TASK_TIMEOUT})
     * @param payloadRules what the handler of a type finds wrong with a payload
     */
    EnqueueRequests(long maxPayloadBytes, Duration defaultTimeout,
                    BiFunction<String, JsonNode, List<String>> payloadRules) {
        this.maxPayloadBytes = maxPayloadBytes;
        this.defaultTimeoutSeconds = (int) defaultTimeout.toSeconds();
        this.payloadRules = payloadRules;
    }

    static void requireQueueName(String queue) {
        if (!QUEUE_NAME.matcher(queue).matches()) {
            throw new InvalidRequestException("queue",
                    "must match " + QUEUE_NAME.pattern() + " (1 to 64 characters)");
        }
    }

    NewTask single(JsonNode body) {
        List<FieldError> errors = new ArrayList<>();
        NewTask task = read(JsonFields.of(body, "", errors));
        if (!errors.isEmpty()) {
            throw new InvalidRequestException(errors);
        }
        return task;
    }

    List<NewTask> batch(JsonNode body) {
        List<FieldError> errors = new ArrayList<>();
        JsonFields fields = JsonFields.of(body, "", errors);
        Optional<JsonNode> items = fields.array("tasks");
        if (items.isEmpty()) {
            throw new InvalidRequestException("tasks", "is required");
        }
        int size = items.get().size();
        if (size < 1 || size > MAX_BATCH) {
            throw new InvalidRequestException("tasks", "must hold 1 to " + MAX_BATCH + " tasks, not " + size);
        }
        List<NewTask> tasks = new ArrayList<>(size);
        Map<String, Integer> firstUseOfKey = new HashMap<>();
        for (int i = 0; i < size; i++) {
            String path = "tasks[" + i + "]";
            NewTask task = read(JsonFields.of(items.get().get(i), path, errors));
            tasks.add(task);
            if (task != null && task.idempotencyKey() != null) {
                Integer first = firstUseOfKey.putIfAbsent(task.idempotencyKey(), i);
                if (first != null) {
                    errors.add(new FieldError(path + ".idempotencyKey",
                            "repeats the key of tasks[" + first + "] in the same batch"));
                }
            }
        }
        if (!errors.isEmpty()) {
            throw new InvalidRequestException(errors);
        }
        return List.copyOf(tasks);
    }

    /** The fields a schedule's task template may have. */
    static final java.util.Set<String> TEMPLATE_FIELDS = java.util.Set.of("type", "payload", "priority", "maxAttempts",
            "timeoutSeconds", "concurrencyKey");

    /**
     * A schedule's task: an enqueue body with only {@link #TEMPLATE_FIELDS}; returns null when a
     * field is invalid (the error is recorded).
     */
    NewTask template(JsonFields fields, JsonNode node) {
        node.properties().forEach(field -> {
            if (!TEMPLATE_FIELDS.contains(field.getKey())) {
                fields.invalid(field.getKey(), "is not a field of a schedule's task (type, payload, priority,"
                        + " maxAttempts, timeoutSeconds, concurrencyKey)");
            }
        });
        return read(fields);
    }

    /**
     * Whether {@code type} matches {@link #TYPE_NAME}, checked a character at a time: matching
     * each task's type against the pattern took 7 % of the replica's CPU in a bulk enqueue.
     */
    static boolean isTypeName(String type) {
        if (type.isEmpty() || type.length() > 128) {
            return false;
        }
        for (int i = 0; i < type.length(); i++) {
            char c = type.charAt(i);
            boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == ':' || c == '-';
            if (!allowed) {
                return false;
            }
        }
        return true;
    }

    /** Reads one task; returns null when a field is invalid (the error is recorded). */
    private NewTask read(JsonFields fields) {
        int before = errorCount(fields);
        Optional<String> type = fields.requiredText("type", 128);
        Optional<String> validType = type.filter(EnqueueRequests::isTypeName);
        if (type.isPresent() && validType.isEmpty()) {
            fields.invalid("type", "must match " + TYPE_NAME.pattern());
        }
        String payload = fields.raw("payload").map(p -> payloadText(fields, p)).orElse(null);
        validType.ifPresent(t -> payloadRules
                .apply(t, fields.raw("payload").orElse(NullNode.getInstance()))
                .forEach(problem -> fields.invalid("payload", problem)));
        int priority = fields.integer("priority", -100, 100).orElse(0L).intValue();
        int maxAttempts = fields.integer("maxAttempts", 1, 100).orElse((long) NewTask.DEFAULT_MAX_ATTEMPTS).intValue();
        String key = fields.text("idempotencyKey", MAX_KEY_LENGTH).orElse(null);
        String concurrencyKey = fields.text("concurrencyKey", MAX_CONCURRENCY_KEY_LENGTH).orElse(null);
        int maxSnoozes = fields.integer("maxSnoozes", 0, NewTask.MAX_SNOOZES)
                .orElse((long) NewTask.DEFAULT_MAX_SNOOZES).intValue();
        int timeoutSeconds = fields.integer("timeoutSeconds", 1, NewTask.MAX_TIMEOUT_SECONDS)
                .map(Long::intValue).orElse(defaultTimeoutSeconds);
        Instant runAt = fields.timestamp("runAt").orElse(null);
        Duration delay = fields.number("delaySeconds").map(seconds -> parseDelay(fields, seconds)).orElse(Duration.ZERO);
        if (fields.has("runAt") && fields.has("delaySeconds")) {
            fields.invalid("delaySeconds", "give runAt or delaySeconds, not both");
        }
        NewTask.Unique unique = fields.object("unique").map(UniqueRules::unique).orElse(null);
        NewTask.Debounce debounce = fields.object("debounce").map(UniqueRules::debounce).orElse(null);
        if (debounce != null) {
            if (fields.has("unique")) {
                fields.invalid("debounce", "give unique or debounce, not both");
            }
            if (fields.has("runAt") || fields.has("delaySeconds")) {
                fields.invalid("debounce", "sets the run time itself: give no runAt or delaySeconds with it");
            }
            delay = debounce.delay();
        }
        if (errorCount(fields) > before || type.isEmpty()) {
            return null;
        }
        return new NewTask(type.get(), payload, priority, runAt, delay, maxAttempts, key, timeoutSeconds,
                concurrencyKey, maxSnoozes, unique, debounce, null, null);
    }

    private static int errorCount(JsonFields fields) {
        return fields.errorCount();
    }

    private String payloadText(JsonFields fields, JsonNode payload) {
        String unstorable = StorableText.unstorable(payload);
        if (unstorable != null) {
            fields.invalid("payload", unstorable);
            return null;
        }
        String text = ExactJson.text(payload);
        long bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxPayloadBytes) {
            throw new PayloadTooLargeException(fields.path("payload") + " is " + bytes
                    + " bytes; the limit is " + maxPayloadBytes);
        }
        return text;
    }

    private static Duration parseDelay(JsonFields fields, BigDecimal seconds) {
        if (seconds.signum() < 0 || seconds.compareTo(MAX_DELAY_SECONDS) > 0) {
            fields.invalid("delaySeconds", "must be within 0.." + MAX_DELAY_SECONDS);
            return Duration.ZERO;
        }
        return Duration.ofNanos(seconds.movePointRight(9).longValue());
    }
}
