/**
 * The event log and its fan-out: the LISTEN connection of this replica, the reader that tails
 * task_event_batch (a row per statement and queue), and the Server-Sent Event streams built on
 * them.
 */
@NullMarked
package dev.tasklane.events;

import org.jspecify.annotations.NullMarked;
