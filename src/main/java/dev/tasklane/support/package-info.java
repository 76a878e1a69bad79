/** Small pieces the capabilities share: group commit, periodic jobs and loops, sinks, jsonb columns. */
@NullMarked
package dev.tasklane.support;

import org.jspecify.annotations.NullMarked;
