package dev.tasklane.queue;

import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.tasklane.events.EventLog;
import org.springframework.stereotype.Component;

/**
 * What follows every write to {@code task}, in one place, so that no caller has to remember it:
 * the metrics of the transition, a wake-up for every queue that has tasks queued by it (at once,
 * or when the earliest of them comes due), and the nudge that makes this replica's event reader
 * look for the events the statement appended. {@link TaskStore} calls it after each statement
 * with the rows the statement changed; the statements themselves NOTIFY the other replicas'
 * readers, except the enqueue, whose NOTIFY the event log groups.
 */
@Component
final class TaskChanges {

    private final TaskMetrics metrics;
    private final Wakeups wakeups;
    private final EventLog events;
    private final QueueFlows flows;

    TaskChanges(TaskMetrics metrics, Wakeups wakeups, EventLog events, QueueFlows flows) {
        this.metrics = metrics;
        this.wakeups = wakeups;
        this.events = events;
        this.flows = flows;
    }

    void enqueued(Collection<Task> inserted) {
        if (inserted.isEmpty()) {
            return;
        }
        metrics.enqueued(inserted);
        wakeForQueued(inserted);
        events.appended();
    }

    /** Waiting tasks whose payload a debounced enqueue replaced and whose run it moved. */
    void debounced(List<Task> moved) {
        if (moved.isEmpty()) {
            return;
        }
        wakeForQueued(moved);
        events.appended();
    }

    void claimed(String queue, List<Task> claimed) {
        if (claimed.isEmpty()) {
            return;
        }
        metrics.claimed(queue, claimed);
        events.appendedAndNotified();
    }

    /** Outcomes recorded and cancels: terminal tasks, or tasks queued for their next attempt. */
    void ended(List<? extends StateChange> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        metrics.ended(tasks);
        wakeForQueued(tasks);
        wakeForFreedSlots(tasks);
        events.appendedAndNotified();
    }

    /** Attempts that snoozed: their tasks wait again, attempt not counted. */
    void snoozed(List<? extends StateChange> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        metrics.snoozed(tasks);
        wakeForQueued(tasks);
        wakeForFreedSlots(tasks);
        events.appendedAndNotified();
    }

    void released(List<Task> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        wakeForQueued(tasks);
        wakeForFreedSlots(tasks);
        events.appendedAndNotified();
    }

    void rescued(List<Task> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        metrics.rescued(tasks);
        wakeForQueued(tasks);
        wakeForFreedSlots(tasks);
        events.appendedAndNotified();
    }

    void retried(List<Task> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        wakeForQueued(tasks);
        events.appendedAndNotified();
    }

    void progressed() {
        events.appendedAndNotified();
    }

    /** A paused queue was resumed: whatever waits there may be claimed now. */
    void resumed(String queue) {
        wakeups.wake(queue, null);
    }

    /**
     * Tasks that stopped running (or were cancelled while waiting) gave back their slots: on a
     * queue with a concurrency limit, claimers may be waiting for one.
     */
    private void wakeForFreedSlots(Collection<? extends StateChange> tasks) {
        tasks.stream().map(StateChange::queue).distinct().filter(queue -> {
            FlowLimits limits = flows.of(queue);
            return limits.maxRunning() != null || limits.maxRunningPerKey() != null;
        }).forEach(queue -> wakeups.wake(queue, null));
    }

    private void wakeForQueued(Collection<? extends StateChange> tasks) {
        Map<String, Optional<Instant>> earliestByQueue = tasks.stream()
                .filter(task -> task.state() == TaskState.QUEUED)
                .collect(Collectors.groupingBy(StateChange::queue,
                        Collectors.mapping(StateChange::runAt, Collectors.minBy(Comparator.naturalOrder()))));
        Instant now = Instant.now();
        earliestByQueue.forEach((queue, earliest) -> earliest.ifPresent(dueAt ->
                wakeups.wake(queue, dueAt.isAfter(now) ? dueAt : null)));
    }
}
