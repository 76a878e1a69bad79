/**
 * Settings, and the database bootstrap: URLs derived from the R2DBC URL, creating the database when missing, and migrating it.
 */
@NullMarked
package dev.tasklane.config;

import org.jspecify.annotations.NullMarked;
