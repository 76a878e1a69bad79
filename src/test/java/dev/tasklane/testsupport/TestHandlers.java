package dev.tasklane.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.tasklane.worker.TaskContext;
import dev.tasklane.worker.TaskHandler;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Task types that only tests enqueue, for handlers that misbehave on purpose:
 * <ul>
 *   <li>{@code test.hang} never completes (but can be cancelled);</li>
 *   <li>{@code test.stubborn} works on another thread for {@code payload.ms} and ignores
 *       cancellation: its result arrives whatever the pipeline decided meanwhile;</li>
 *   <li>{@code test.snooze} snoozes the first time it runs a task, and succeeds the next;</li>
 *   <li>{@code test.ticker} reports progress every 100 ms for {@code payload.ms} and records when
 *       each of its runs started and stopped ({@link #runs()}), in this JVM.</li>
 * </ul>
 */
@TestConfiguration(proxyBeanMethods = false)
public class TestHandlers {

    /**
     * One run of a {@code test.ticker} handler, by this JVM's monotonic clock.
     *
     * @param taskId the task
     * @param attempt its attempt
     * @param startedNanos when the handler started
     * @param stoppedNanos when it stopped (cancelled or done)
     */
    public record Run(long taskId, int attempt, long startedNanos, long stoppedNanos) {
    }

    private static final List<Run> RUNS = new CopyOnWriteArrayList<>();

    /** Every finished run of {@code test.ticker}, in this JVM. */
    public static List<Run> runs() {
        return List.copyOf(RUNS);
    }

    @Bean
    TaskHandler hangingHandler() {
        return handler("test.hang", context -> Mono.never());
    }

    @Bean
    TaskHandler stubbornHandler() {
        return handler("test.stubborn", context -> {
            long ms = context.payload().path("ms").asLong(3000);
            return Mono.fromFuture(CompletableFuture.supplyAsync(() -> Map.of("ignored", "cancellation"),
                    CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS)), true);
        });
    }

    private static final java.util.Set<Long> SNOOZED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** {@code test.snooze}: snoozes for {@code payload.ms} (default 200) the first time it runs a task, then succeeds. */
    @Bean
    TaskHandler snoozingHandler() {
        return handler("test.snooze", context -> SNOOZED.add(context.taskId())
                ? context.snooze(Duration.ofMillis(context.payload().path("ms").asLong(200)))
                : Mono.just(Map.of("snoozedBefore", true)));
    }

    @Bean
    TaskHandler tickerHandler() {
        return handler("test.ticker", context -> {
            long ms = context.payload().path("ms").asLong(10_000);
            return Mono.defer(() -> {
                long started = System.nanoTime();
                return Flux.interval(Duration.ofMillis(100))
                        .onBackpressureDrop() // a report that waits on the database skips ticks
                        .take(Math.max(1, ms / 100))
                        .concatMap(tick -> context.progress(null, "tick " + tick))
                        .then()
                        .doFinally(signal -> RUNS.add(new Run(context.taskId(), context.attempt(), started,
                                System.nanoTime())));
            });
        });
    }

    private static TaskHandler handler(String type, java.util.function.Function<TaskContext, Mono<?>> handle) {
        return new TaskHandler() {
            @Override
            public String type() {
                return type;
            }

            @Override
            public Mono<?> handle(TaskContext context) {
                return handle.apply(context);
            }
        };
    }
}
