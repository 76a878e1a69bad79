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
 */
public record QueueStats(String name, long queued, long running, long succeeded, long failed, long cancelled,
                         @Nullable Double oldestQueuedAgeSeconds, boolean paused) {

    public static QueueStats empty(String name) {
        return new QueueStats(name, 0, 0, 0, 0, 0, null, false);
    }
}
