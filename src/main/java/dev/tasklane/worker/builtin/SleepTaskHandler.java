package dev.tasklane.worker.builtin;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tasklane.worker.PermanentTaskFailure;
import dev.tasklane.worker.TaskContext;
import dev.tasklane.worker.TaskHandler;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * {@code sleep}: sleeps {@code durationMs} in {@code steps} equal parts, reporting progress after
 * each, and fails with {@code simulated failure} while {@code attempt <= failAttempts}.
 */
@Component
final class SleepTaskHandler implements TaskHandler {

    static final String SIMULATED_FAILURE = "simulated failure";

    /**
     * @param durationMs total sleep
     * @param steps how many parts
     * @param failAttempts attempts that fail
     */
    record Plan(long durationMs, int steps, long failAttempts) {
    }

    @Override
    public String type() {
        return "sleep";
    }

    @Override
    public List<String> validate(JsonNode payload) {
        List<String> problems = new ArrayList<>();
        plan(payload, problems);
        return problems;
    }

    @Override
    public Mono<?> handle(TaskContext context) {
        List<String> problems = new ArrayList<>();
        Plan plan = plan(context.payload(), problems);
        if (!problems.isEmpty()) {
            return Mono.error(new PermanentTaskFailure(String.join("; ", problems)));
        }
        return Flux.range(1, plan.steps())
                .concatMap(step -> Mono.delay(Duration.ofMillis(plan.durationMs() * step / plan.steps()
                                - plan.durationMs() * (step - 1) / plan.steps()))
                        .then(context.progress(Math.round(100f * step / plan.steps()), "step " + step + "/" + plan.steps())))
                .then(Mono.defer(() -> context.attempt() <= plan.failAttempts()
                        ? Mono.error(new IllegalStateException(SIMULATED_FAILURE))
                        : Mono.just(Map.of("sleptMs", plan.durationMs()))));
    }

    private static Plan plan(JsonNode payload, List<String> problems) {
        if (!payload.isObject() && !payload.isNull()) {
            problems.add("payload must be an object");
            return new Plan(0, 1, 0);
        }
        Long duration = PayloadFields.wholeNumber(payload, "durationMs", 0, 3_600_000, 0, problems);
        Long steps = PayloadFields.wholeNumber(payload, "steps", 1, 1000, 1, problems);
        Long failAttempts = PayloadFields.wholeNumber(payload, "failAttempts", 0, Integer.MAX_VALUE, 0, problems);
        return new Plan(duration == null ? 0 : duration, steps == null ? 1 : steps.intValue(),
                failAttempts == null ? 0 : failAttempts);
    }
}
