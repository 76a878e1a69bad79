package dev.tasklane.queue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.tasklane.queue.FlowLimits.Fairness;
import dev.tasklane.queue.FlowLimits.Rate;
import dev.tasklane.support.WholeNumbers;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * A change to a queue's flow control, read from a JSON merge patch ({@code PATCH /queues/{queue}},
 * one queue of {@code TASKLANE_QUEUES}): a field that is absent stays as it is, {@code null}
 * clears it, a value sets it.
 */
public record FlowPatch(Change<Integer> maxRunning, Change<Integer> maxRunningPerKey, Change<Rate> rate,
                        Change<Rate> ratePerKey, Change<Fairness> fairness) {

    private static final Set<String> FIELDS = Set.of("maxRunning", "maxRunningPerKey", "rate", "ratePerKey", "fairness");

    /**
     * One setting of a patch.
     *
     * @param given whether the patch names the setting
     * @param value its new value; null clears it
     */
    public record Change<T>(boolean given, @Nullable T value) {

        static <T> Change<T> keep() {
            return new Change<>(false, null);
        }

        @Nullable T applyTo(@Nullable T current) {
            return given ? value : current;
        }
    }

    /**
     * What is wrong with one field of a patch.
     *
     * @param field its path, like {@code rate.count}
     * @param message why
     * @param wrongType whether the JSON type is wrong (400), rather than the value (422)
     */
    public record Problem(String field, String message, boolean wrongType) {
    }

    /** A patch that could not be read; {@link #problems()} names each field. */
    public static final class InvalidFlowPatch extends RuntimeException {

        private final List<Problem> problems;

        InvalidFlowPatch(List<Problem> problems) {
            super(problems.stream().map(p -> p.field() + " " + p.message()).reduce((a, b) -> a + "; " + b).orElse(""));
            this.problems = List.copyOf(problems);
        }

        public List<Problem> problems() {
            return problems;
        }
    }

    /** The settings after this patch. */
    public FlowLimits applyTo(FlowLimits current) {
        Fairness fair = fairness.applyTo(current.fairness());
        return new FlowLimits(maxRunning.applyTo(current.maxRunning()),
                maxRunningPerKey.applyTo(current.maxRunningPerKey()), rate.applyTo(current.rate()),
                ratePerKey.applyTo(current.ratePerKey()), fair == null ? Fairness.FIFO : fair);
    }

    /** The patch that sets every setting to {@code limits}, clearing what it leaves null. */
    public static FlowPatch replacingWith(FlowLimits limits) {
        return new FlowPatch(new Change<>(true, limits.maxRunning()), new Change<>(true, limits.maxRunningPerKey()),
                new Change<>(true, limits.rate()), new Change<>(true, limits.ratePerKey()),
                new Change<>(true, limits.fairness()));
    }

    /**
     * Reads a patch; fields are named under {@code path} (empty for none).
     *
     * @throws InvalidFlowPatch naming every field that is wrong
     */
    public static FlowPatch read(JsonNode node, String path) {
        List<Problem> problems = new ArrayList<>();
        if (!node.isObject()) {
            throw new InvalidFlowPatch(List.of(new Problem(path.isEmpty() ? "body" : path, "must be a JSON object",
                    true)));
        }
        for (Map.Entry<String, JsonNode> property : node.properties()) {
            if (!FIELDS.contains(property.getKey())) {
                problems.add(new Problem(join(path, property.getKey()), "is not a flow-control setting (one of "
                        + "maxRunning, maxRunningPerKey, rate, ratePerKey, fairness)", false));
            }
        }
        FlowPatch patch = new FlowPatch(limit(node, path, "maxRunning", problems),
                limit(node, path, "maxRunningPerKey", problems), rate(node, path, "rate", problems),
                rate(node, path, "ratePerKey", problems), fairness(node, path, problems));
        if (!problems.isEmpty()) {
            throw new InvalidFlowPatch(problems);
        }
        return patch;
    }

    private static Change<Integer> limit(JsonNode node, String path, String field, List<Problem> problems) {
        if (!node.has(field)) {
            return Change.keep();
        }
        JsonNode value = node.get(field);
        return new Change<>(true, value.isNull() ? null : count(value, join(path, field), problems));
    }

    private static Change<Rate> rate(JsonNode node, String path, String field, List<Problem> problems) {
        if (!node.has(field)) {
            return Change.keep();
        }
        JsonNode value = node.get(field);
        String at = join(path, field);
        if (value.isNull()) {
            return new Change<>(true, null);
        }
        if (!value.isObject()) {
            problems.add(new Problem(at, "must be an object {\"count\": n, \"periodSeconds\": s} or null", true));
            return Change.keep();
        }
        int before = problems.size();
        for (Map.Entry<String, JsonNode> property : value.properties()) {
            if (!property.getKey().equals("count") && !property.getKey().equals("periodSeconds")) {
                problems.add(new Problem(join(at, property.getKey()), "is not a field of a rate (count, periodSeconds)",
                        false));
            }
        }
        Integer count = required(value, at, "count", problems);
        Integer period = required(value, at, "periodSeconds", problems);
        if (problems.size() > before || count == null || period == null) {
            return Change.keep();
        }
        return new Change<>(true, new Rate(count, period));
    }

    private static @Nullable Integer required(JsonNode rate, String at, String field, List<Problem> problems) {
        JsonNode value = rate.get(field);
        if (value == null || value.isNull()) {
            problems.add(new Problem(join(at, field), "is required: a rate needs both count and periodSeconds", false));
            return null;
        }
        return count(value, join(at, field), problems);
    }

    private static @Nullable Integer count(JsonNode value, String at, List<Problem> problems) {
        if (!value.isNumber()) {
            problems.add(new Problem(at, "must be a number", true));
            return null;
        }
        BigDecimal number = value.decimalValue();
        if (!WholeNumbers.isWhole(number)) {
            problems.add(new Problem(at, "must be a whole number", false));
            return null;
        }
        if (!WholeNumbers.isWithin(number, 1, FlowLimits.MAX)) {
            problems.add(new Problem(at, "must be within 1.." + FlowLimits.MAX + " (null clears it)", false));
            return null;
        }
        return number.intValueExact();
    }

    private static Change<Fairness> fairness(JsonNode node, String path, List<Problem> problems) {
        if (!node.has("fairness")) {
            return Change.keep();
        }
        JsonNode value = node.get("fairness");
        if (value.isNull()) {
            return new Change<>(true, null);
        }
        if (!value.isString()) {
            problems.add(new Problem(join(path, "fairness"), "must be a string", true));
            return Change.keep();
        }
        Fairness fairness = Fairness.ofWireName(value.stringValue());
        if (fairness == null) {
            problems.add(new Problem(join(path, "fairness"), "must be \"fifo\" or \"round-robin\"", false));
            return Change.keep();
        }
        return new Change<>(true, fairness);
    }

    private static String join(String path, String field) {
        return path.isEmpty() ? field : path + "." + field;
    }
}
