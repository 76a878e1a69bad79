/**
 * The task table: its statements and the one store that runs them. Every change of a task appends its event in the same statement.
 */
@NullMarked
package dev.tasklane.queue;

import org.jspecify.annotations.NullMarked;
