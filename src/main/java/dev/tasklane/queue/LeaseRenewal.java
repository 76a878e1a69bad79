package dev.tasklane.queue;

import java.time.Duration;
import java.util.UUID;

/**
 * A lease that a renewal extended.
 *
 * @param taskId the task
 * @param leaseId the lease
 * @param remaining how long the lease now runs, by the database's clock, from the renewal
 */
public record LeaseRenewal(long taskId, UUID leaseId, Duration remaining) {
}
