package dev.tasklane.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.stereotype.Component;

/**
 * Counts what happens to tasks, as {@link TaskStore} records it: one place that sees every
 * transition, whichever worker (in-process or pull) or call caused it. Counts within one batch
 * are added up before they reach the registry, and meters are kept by their labels, so the hot
 * path does one map lookup per batch and label set rather than a registry lookup per task.
 */
@Component
public final class TaskMetrics {

    private static final Duration SHORTEST = Duration.ofMillis(1);
    private static final Duration LONGEST = Duration.ofHours(2);

    private final MeterRegistry meters;
    private final Map<List<String>, Counter> enqueued = new ConcurrentHashMap<>();
    private final Map<String, Counter> claimed = new ConcurrentHashMap<>();
    private final Map<String, DistributionSummary> batchSizes = new ConcurrentHashMap<>();
    private final Map<String, Timer> queueTimes = new ConcurrentHashMap<>();
    private final Map<List<String>, Counter> completed = new ConcurrentHashMap<>();
    private final Map<List<String>, Counter> retried = new ConcurrentHashMap<>();
    private final Map<List<String>, Counter> snoozed = new ConcurrentHashMap<>();
    private final Map<List<String>, Timer> runTimes = new ConcurrentHashMap<>();
    private final Map<String, Counter> rescued = new ConcurrentHashMap<>();

    TaskMetrics(MeterRegistry meters) {
        this.meters = meters;
    }

    void enqueued(Collection<Task> tasks) {
        countBy(tasks, task -> List.of(task.queue(), task.type())).forEach((key, n) -> enqueued.computeIfAbsent(key,
                k -> Counter.builder("tasklane.tasks.enqueued").description("Tasks enqueued")
                        .tag("queue", k.get(0)).tag("type", k.get(1)).register(meters)).increment(n));
    }

    void claimed(String queue, Collection<Task> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        claimed.computeIfAbsent(queue, q -> Counter.builder("tasklane.tasks.claimed")
                .description("Tasks claimed by workers").tag("queue", q).register(meters)).increment(tasks.size());
        batchSizes.computeIfAbsent(queue, q -> DistributionSummary.builder("tasklane.claim.batch.size")
                .description("Tasks taken by one claim").tag("queue", q).register(meters)).record(tasks.size());
        Timer queueTime = queueTimes.computeIfAbsent(queue, q -> Timer.builder("tasklane.task.queue.time")
                .description("From when a task was due (created or run-at, whichever is later) to its claim")
                .tag("queue", q)
                .publishPercentileHistogram().minimumExpectedValue(SHORTEST).maximumExpectedValue(LONGEST)
                .register(meters));
        for (Task task : tasks) {
            if (task.startedAt() != null) {
                Instant due = task.runAt().isAfter(task.createdAt()) ? task.runAt() : task.createdAt();
                queueTime.record(nonNegative(Duration.between(due, task.startedAt())));
            }
        }
    }

    /** Tasks as a transition left them: terminal ones are completed, queued ones retried. */
    void snoozed(Collection<? extends StateChange> tasks) {
        countBy(tasks, task -> List.of(task.queue(), task.type())).forEach((key, n) ->
                snoozed.computeIfAbsent(key, k -> Counter.builder("tasklane.tasks.snoozed")
                        .description("Attempts that snoozed: their tasks run again later, the attempt not counted")
                        .tag("queue", k.get(0)).tag("type", k.get(1)).register(meters)).increment(n));
    }

    void ended(Collection<? extends StateChange> tasks) {
        countBy(tasks.stream().filter(t -> t.state().isTerminal()).toList(),
                task -> List.of(task.queue(), task.type(), task.state().wireName())).forEach((key, n) ->
                completed.computeIfAbsent(key, k -> Counter.builder("tasklane.tasks.completed")
                        .description("Tasks that reached a terminal state")
                        .tag("queue", k.get(0)).tag("type", k.get(1)).tag("outcome", k.get(2))
                        .register(meters)).increment(n));
        countBy(tasks.stream().filter(t -> t.state() == TaskState.QUEUED).toList(),
                task -> List.of(task.queue(), task.type())).forEach((key, n) ->
                retried.computeIfAbsent(key, k -> Counter.builder("tasklane.tasks.retried")
                        .description("Failed attempts scheduled to run again")
                        .tag("queue", k.get(0)).tag("type", k.get(1)).register(meters)).increment(n));
        for (StateChange task : tasks) {
            if (task.state().isTerminal() && task.startedAt() != null && task.finishedAt() != null) {
                runTimes.computeIfAbsent(List.of(task.queue(), task.type()), k -> Timer.builder("tasklane.task.run.time")
                                .description("From a task's last start to its end")
                                .tag("queue", k.get(0)).tag("type", k.get(1))
                                .publishPercentileHistogram().minimumExpectedValue(SHORTEST)
                                .maximumExpectedValue(LONGEST).register(meters))
                        .record(nonNegative(Duration.between(task.startedAt(), task.finishedAt())));
            }
        }
    }

    void rescued(Collection<Task> tasks) {
        countBy(tasks, task -> List.of(task.queue())).forEach((key, n) -> rescued.computeIfAbsent(key.get(0),
                q -> Counter.builder("tasklane.tasks.rescued").description("Tasks whose lease expired, taken back")
                        .tag("queue", q).register(meters)).increment(n));
        ended(tasks.stream().filter(t -> t.state().isTerminal()).toList());
    }

    private static <T> Map<List<String>, Long> countBy(Collection<? extends T> tasks,
                                                       Function<? super T, List<String>> key) {
        return tasks.stream().collect(Collectors.groupingBy(key, Collectors.counting()));
    }

    private static Duration nonNegative(Duration duration) {
        return duration.isNegative() ? Duration.ZERO : duration;
    }
}
