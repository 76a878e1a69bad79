package dev.tasklane.api;

import java.math.BigDecimal;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

import dev.tasklane.support.StorableText;
import dev.tasklane.support.WholeNumbers;
import tools.jackson.databind.JsonNode;

/**
 * Reads the fields of one JSON object by the contract's rules: a field of the wrong JSON type
 * is a 400 at once; a value out of range is recorded as a {@link FieldError} so that a 422 can
 * name every bad field together. A field that is absent or JSON {@code null} is not given.
 */
final class JsonFields {

    /**
     * The earliest and latest instant a timestamp field takes: years 1..9999 in UTC, to the
     * microsecond PostgreSQL keeps. PostgreSQL would store more (to 294276 AD), but four-digit
     * years are what the Java client and JSON consumers read back; beyond them the database refused
     * the statement and the caller got a 500.
     */
    static final Instant EARLIEST_TIMESTAMP = Instant.parse("0001-01-01T00:00:00Z");
    static final Instant LATEST_TIMESTAMP = Instant.parse("9999-12-31T23:59:59.999999Z");

    private final JsonNode node;
    private final String path;
    private final List<FieldError> errors;

    private JsonFields(JsonNode node, String path, List<FieldError> errors) {
        this.node = node;
        this.path = path;
        this.errors = errors;
    }

    /** The object at {@code path}; {@code errors} collects what is invalid in it. */
    static JsonFields of(JsonNode node, String path, List<FieldError> errors) {
        if (node == null || !node.isObject()) {
            throw new MalformedRequestException(path.isEmpty() ? "body" : path, "must be a JSON object");
        }
        return new JsonFields(node, path, errors);
    }

    String path(String field) {
        return path.isEmpty() ? field : path + "." + field;
    }

    int errorCount() {
        return errors.size();
    }

    void invalid(String field, String message) {
        errors.add(new FieldError(path(field), message));
    }

    boolean has(String field) {
        JsonNode value = node.get(field);
        return value != null && !value.isNull();
    }

    Optional<JsonNode> raw(String field) {
        return has(field) ? Optional.of(node.get(field)) : Optional.empty();
    }

    Optional<String> string(String field) {
        return raw(field).map(value -> {
            if (!value.isString()) {
                throw new MalformedRequestException(path(field), "must be a string");
            }
            return value.stringValue();
        });
    }

    /** A string that must be present and hold 1..maxLength characters without NUL. */
    Optional<String> requiredText(String field, int maxLength) {
        if (!has(field)) {
            invalid(field, "is required");
            return Optional.empty();
        }
        return text(field, maxLength);
    }

    /** An optional string of 1..maxLength characters without NUL (PostgreSQL text cannot hold it). */
    Optional<String> text(String field, int maxLength) {
        Optional<String> value = string(field);
        if (value.isEmpty()) {
            return value;
        }
        String text = value.get();
        int length = text.codePointCount(0, text.length());
        if (length < 1 || length > maxLength) {
            invalid(field, "must be 1 to " + maxLength + " characters");
            return Optional.empty();
        }
        if (!StorableText.isStorable(text)) {
            invalid(field, "must be valid Unicode without NUL characters");
            return Optional.empty();
        }
        return value;
    }

    Optional<BigDecimal> number(String field) {
        Optional<JsonNode> raw = raw(field);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        JsonNode value = raw.get();
        if (!value.isNumber()) {
            throw new MalformedRequestException(path(field), "must be a number");
        }
        if ((value.isDouble() || value.isFloat()) && !Double.isFinite(value.doubleValue())) {
            invalid(field, "is out of range");
            return Optional.empty();
        }
        return Optional.of(value.decimalValue());
    }

    /** A whole number within min..max; fractions and values outside are invalid. */
    Optional<Long> integer(String field, long min, long max) {
        Optional<BigDecimal> value = number(field);
        if (value.isEmpty()) {
            return Optional.empty();
        }
        BigDecimal number = value.get();
        if (!WholeNumbers.isWhole(number)) {
            invalid(field, "must be a whole number");
            return Optional.empty();
        }
        if (!WholeNumbers.isWithin(number, min, max)) {
            invalid(field, "must be within " + min + ".." + max);
            return Optional.empty();
        }
        return Optional.of(number.longValueExact());
    }

    /** An ISO-8601 timestamp with offset, within {@link #EARLIEST_TIMESTAMP}..{@link #LATEST_TIMESTAMP}. */
    Optional<Instant> timestamp(String field) {
        return string(field).flatMap(text -> {
            Instant instant;
            try {
                instant = OffsetDateTime.parse(text).toInstant();
            } catch (DateTimeException e) {
                invalid(field, "must be an ISO-8601 timestamp with offset, like 2026-12-02T10:00:00Z");
                return Optional.empty();
            }
            if (instant.isBefore(EARLIEST_TIMESTAMP) || instant.isAfter(LATEST_TIMESTAMP)) {
                invalid(field, "must be within " + EARLIEST_TIMESTAMP + ".." + LATEST_TIMESTAMP + " (years 1 to 9999)");
                return Optional.empty();
            }
            return Optional.of(instant);
        });
    }

    Optional<Boolean> bool(String field) {
        return raw(field).map(value -> {
            if (!value.isBoolean()) {
                throw new MalformedRequestException(path(field), "must be true or false");
            }
            return value.booleanValue();
        });
    }

    /** A nested object, read by the same rules under its own path. */
    Optional<JsonFields> object(String field) {
        return raw(field).map(value -> of(value, path(field), errors));
    }

    Optional<JsonNode> array(String field) {
        return raw(field).map(value -> {
            if (!value.isArray()) {
                throw new MalformedRequestException(path(field), "must be an array");
            }
            return value;
        });
    }
}
