/**
 * The replica's one LISTEN connection and its NOTIFYs: the typed channels, the coalescing sender,
 * and the liveness check that replaces a connection which stopped answering.
 */
@NullMarked
package dev.tasklane.notify;

import org.jspecify.annotations.NullMarked;
