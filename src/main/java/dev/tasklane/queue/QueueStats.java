package dev.tasklane.queue;

import org.jspecify.annotations.Nullable;

/**
 * One queue's counts and flags.
 *
 * @param name the queue
 * @param queued waiting tasks (delayed and backing off included)
 * @param running running tasks
 * @param succeeded succeeded tasks
 * @param failed failed tasks
 * @param cancelled cancelled tasks
 * @param oldestQueuedAgeSeconds how long the longest-waiting due task has been available; null when none is due
 * @param paused whether claims are stopped
 * @param limits its flow control
 * @param heldBack the due tasks its flow control holds back now
 */
public record QueueStats(String name, long queued, long running, long succeeded, long failed, long cancelled,
                         @Nullable Double oldestQueuedAgeSeconds, boolean paused, FlowLimits limits,
                         HeldBack heldBack) {

    /**
     * Due tasks held back now, by the limit that holds them (a task may be held by several).
     *
     * @param maxRunning beyond the queue's free slots
     * @param maxRunningPerKey beyond their keys' free slots, summed over keys
     * @param rate beyond what the queue's rate, or their keys' rates, let start now
     */
    public record HeldBack(long maxRunning, long maxRunningPerKey, long rate) {

        public static final HeldBack NONE = new HeldBack(0, 0, 0);
    }

    public static QueueStats empty(String name) {
        return new QueueStats(name, 0, 0, 0, 0, 0, null, false, FlowLimits.NONE, HeldBack.NONE);
    }

    QueueStats withHeldBack(HeldBack held) {
        return new QueueStats(name, queued, running, succeeded, failed, cancelled, oldestQueuedAgeSeconds, paused,
                limits, held);
    }
}
