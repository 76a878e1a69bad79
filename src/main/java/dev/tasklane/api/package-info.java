/**
 * The HTTP edge: REST controllers shaped exactly like the contract, reading of request bodies by its rules, RFC 9457 problems and bearer-token security.
 */
@NullMarked
package dev.tasklane.api;

import org.jspecify.annotations.NullMarked;
