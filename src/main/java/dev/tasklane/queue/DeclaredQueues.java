package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.FlowLimits.Rate;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code TASKLANE_QUEUES}: queues declared with their flow control, so that a Kubernetes ConfigMap
 * can own them. The document is read when the replica is built, and an invalid one stops the start
 * with a message naming the field. Each start applies it right after the migrations, on the main
 * thread, before the replica claims or serves anything: every declared queue gets exactly the
 * declared settings (a setting it leaves out is cleared), and keeps its pause flag. A later PATCH
 * holds until the next start. Other replicas read the change within their refresh interval.
 */
@Component
public final class DeclaredQueues implements Callback {

    /** What a queue may be called. */
    public static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}");

    private static final Logger log = LoggerFactory.getLogger(DeclaredQueues.class);
    private static final String SETTING = "TASKLANE_QUEUES";
    private static final String UPSERT = """
            INSERT INTO queue (name, max_running, max_running_per_key, rate_count, rate_period_seconds,
                               rate_per_key_count, rate_per_key_period_seconds, fairness)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET
                max_running = EXCLUDED.max_running, max_running_per_key = EXCLUDED.max_running_per_key,
                rate_count = EXCLUDED.rate_count, rate_period_seconds = EXCLUDED.rate_period_seconds,
                rate_per_key_count = EXCLUDED.rate_per_key_count,
                rate_per_key_period_seconds = EXCLUDED.rate_per_key_period_seconds,
                fairness = EXCLUDED.fairness, updated_at = now()
            """;

    private final Map<String, FlowLimits> declared;

    DeclaredQueues(TasklaneProperties properties) {
        this.declared = parse(properties.queues());
    }

    /** The queues the document declares, in its order. */
    public Map<String, FlowLimits> declared() {
        return declared;
    }

    /**
     * Reads a {@code TASKLANE_QUEUES} document; null or blank declares nothing.
     *
     * @throws IllegalArgumentException naming every field that is wrong
     */
    static Map<String, FlowLimits> parse(@Nullable String document) {
        if (document == null || document.isBlank()) {
            return Map.of();
        }
        JsonNode root;
        try {
            root = JsonMapper.builder().build().readTree(document);
        } catch (JacksonException e) {
            throw new IllegalArgumentException(SETTING + " is not valid JSON: " + e.getOriginalMessage());
        }
        if (!root.isObject()) {
            throw new IllegalArgumentException(SETTING + " must be a JSON object {\"queue-name\": {settings}}");
        }
        Map<String, FlowLimits> queues = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, JsonNode> queue : root.properties()) {
            if (!QUEUE_NAME.matcher(queue.getKey()).matches()) {
                problems.add(queue.getKey() + ": is not a queue name (" + QUEUE_NAME.pattern() + ")");
                continue;
            }
            try {
                queues.put(queue.getKey(), FlowPatch.read(queue.getValue(), queue.getKey()).applyTo(FlowLimits.NONE));
            } catch (FlowPatch.InvalidFlowPatch e) {
                e.problems().forEach(problem -> problems.add(problem.field() + ": " + problem.message()));
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(SETTING + " is invalid: " + String.join("; ", problems));
        }
        return Map.copyOf(queues);
    }

    @Override
    public boolean supports(Event event, Context context) {
        return event == Event.AFTER_MIGRATE && !declared.isEmpty();
    }

    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return true;
    }

    @Override
    public void handle(Event event, Context context) {
        Connection connection = context.getConnection();
        try (PreparedStatement upsert = connection.prepareStatement(UPSERT);
             PreparedStatement notify = connection.prepareStatement("SELECT pg_notify('tasklane_flow', ?)")) {
            for (Map.Entry<String, FlowLimits> queue : declared.entrySet()) {
                FlowLimits limits = queue.getValue();
                upsert.setString(1, queue.getKey());
                setInt(upsert, 2, limits.maxRunning());
                setInt(upsert, 3, limits.maxRunningPerKey());
                setRate(upsert, 4, limits.rate());
                setRate(upsert, 6, limits.ratePerKey());
                upsert.setString(8, limits.fairness().wireName());
                upsert.executeUpdate();
                notify.setString(1, queue.getKey());
                notify.execute();
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not apply " + SETTING + ": " + e.getMessage(), e);
        }
        log.info("Applied {} to queues {}", SETTING, declared.keySet());
    }

    @Override
    public String getCallbackName() {
        return "tasklane-declared-queues";
    }

    private static void setRate(PreparedStatement statement, int index, @Nullable Rate rate) throws SQLException {
        setInt(statement, index, rate == null ? null : rate.count());
        setInt(statement, index + 1, rate == null ? null : rate.periodSeconds());
    }

    private static void setInt(PreparedStatement statement, int index, @Nullable Integer value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.INTEGER);
        } else {
            statement.setInt(index, value);
        }
    }
}
