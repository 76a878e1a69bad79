package dev.tasklane.worker.builtin;

import dev.tasklane.worker.TaskContext;
import dev.tasklane.worker.TaskHandler;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** {@code noop}: succeeds at once with a null result. */
@Component
final class NoopTaskHandler implements TaskHandler {

    @Override
    public String type() {
        return "noop";
    }

    @Override
    public Mono<?> handle(TaskContext context) {
        return Mono.empty();
    }
}
