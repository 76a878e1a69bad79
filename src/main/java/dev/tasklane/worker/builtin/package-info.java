/**
 * The built-in task types: noop, sleep and http.
 */
@NullMarked
package dev.tasklane.worker.builtin;

import org.jspecify.annotations.NullMarked;
