package dev.tasklane.events;

/**
 * Retention pruned events after the subscriber's cursor: sent in their place, so that a
 * subscriber learns it missed them instead of skipping silently.
 *
 * @param prunedThrough the highest event id retention has deleted
 */
public record Gap(long prunedThrough) implements StreamItem {
}
