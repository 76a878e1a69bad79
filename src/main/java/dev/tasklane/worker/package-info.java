/**
 * In-process work: the TaskHandler SPI, one reactive pipeline per configured queue that claims
 * only what it has room for, batched outcomes, lease renewal and the drain on shutdown.
 */
@NullMarked
package dev.tasklane.worker;

import org.jspecify.annotations.NullMarked;
