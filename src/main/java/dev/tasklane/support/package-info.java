/** Small pieces every capability uses: periodic jobs. */
@NullMarked
package dev.tasklane.support;

import org.jspecify.annotations.NullMarked;
