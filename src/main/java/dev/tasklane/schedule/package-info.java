/**
 * Cron schedules: their tables and the one store that runs their statements, the cron parser with
 * its time-zone rules, and the scheduler loop every replica runs without a leader.
 */
@NullMarked
package dev.tasklane.schedule;

import org.jspecify.annotations.NullMarked;
