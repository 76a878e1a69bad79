package dev.tasklane.queue;

import java.util.UUID;

/**
 * One claim of one task: what a worker holds, and what every outcome, renewal and release names.
 *
 * @param taskId the task
 * @param leaseId the lease the claim drew
 */
public record LeaseKey(long taskId, UUID leaseId) {

    public static LeaseKey of(Task task) {
        if (task.leaseId() == null) {
            throw new IllegalArgumentException("task " + task.id() + " is not held under a lease");
        }
        return new LeaseKey(task.id(), task.leaseId());
    }
}
