package dev.tasklane.worker;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.transport.ReceiverContext;
import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.Task;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * Spans of a task's claim and run, in the trace of the request that enqueued it: the task's
 * stored {@code traceparent} is their remote parent, read by the tracing bridge's propagator as
 * from a message. The run's observation is in the handler's Reactor context, so spans a handler
 * makes are its children. Nothing is made while trace export is off (the default), so tracing
 * costs the hot path nothing then.
 */
@Component
public final class TaskTracing {

    static final String CLAIM = "tasklane.task.claim";
    static final String RUN = "tasklane.task.run";
    private static final String TRACEPARENT = "traceparent";

    private final ObservationRegistry registry;
    private final boolean enabled;

    TaskTracing(ObjectProvider<ObservationRegistry> registry,
                @Value("${management.tracing.export.enabled:false}") boolean enabled) {
        this.registry = registry.getIfAvailable(() -> ObservationRegistry.NOOP);
        this.enabled = enabled && !this.registry.isNoop();
    }

    /** Records that {@code workerId} claimed the task: a span of a moment in its trace. */
    public void claimed(Task task, String workerId) {
        if (enabled) {
            observation(CLAIM, "claim " + task.type(), task, workerId).start().stop();
        }
    }

    /** Runs an in-process attempt inside a span of the task's trace; its outcome is a tag. */
    Mono<Outcome> run(Task task, String workerId, Mono<Outcome> attempt) {
        if (!enabled) {
            return attempt;
        }
        return Mono.defer(() -> {
            Observation run = observation(RUN, "run " + task.type(), task, workerId).start();
            return attempt
                    .doOnNext(outcome -> run.highCardinalityKeyValue("tasklane.outcome", outcome.succeeded() ? "succeeded"
                            : outcome.snooze() != null ? "snoozed" : "failed"))
                    .doOnError(run::error)
                    .doFinally(signal -> run.stop())
                    .contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, run));
        });
    }

    private Observation observation(String name, String contextualName, Task task, String workerId) {
        ReceiverContext<Task> context = new ReceiverContext<>(
                (carrier, key) -> TRACEPARENT.equals(key) ? carrier.traceparent() : null);
        context.setCarrier(task);
        context.setRemoteServiceName("tasklane");
        return Observation.createNotStarted(name, () -> context, registry)
                .contextualName(contextualName)
                .lowCardinalityKeyValue("tasklane.queue", task.queue())
                .lowCardinalityKeyValue("tasklane.task.type", task.type())
                .highCardinalityKeyValue("tasklane.task.id", Long.toString(task.id()))
                .highCardinalityKeyValue("tasklane.worker.id", workerId);
    }
}
