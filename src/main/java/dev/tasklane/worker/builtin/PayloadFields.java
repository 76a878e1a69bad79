package dev.tasklane.worker.builtin;

import java.math.BigDecimal;
import java.util.List;

import dev.tasklane.support.WholeNumbers;
import tools.jackson.databind.JsonNode;

/** Reads optional whole-number fields of a built-in type's payload, collecting what is wrong. */
final class PayloadFields {

    private PayloadFields() {
    }

    /** The field's value, {@code fallback} when absent, or null (with a problem added) when invalid. */
    static Long wholeNumber(JsonNode payload, String field, long min, long max, long fallback, List<String> problems) {
        JsonNode value = payload.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        BigDecimal number = value.isIntegralNumber() || value.isBigDecimal() ? value.decimalValue() : null;
        if (number == null || !WholeNumbers.isWhole(number) || !WholeNumbers.isWithin(number, min, max)) {
            problems.add("payload." + field + " must be a whole number within " + min + ".." + max);
            return null;
        }
        return number.longValueExact();
    }
}
