/**
 * Running the service: readiness on the database, the OpenAPI description.
 */
@NullMarked
package dev.tasklane.ops;

import org.jspecify.annotations.NullMarked;
