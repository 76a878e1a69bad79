/**
 * Loops any replica may run: lease rescue, worker registry clean-up and retention.
 */
@NullMarked
package dev.tasklane.maintenance;

import org.jspecify.annotations.NullMarked;
