package dev.tasklane.support;

import java.math.BigDecimal;

/**
 * Whole numbers as JSON carries them, read exactly ({@link ExactJson}): {@code 100}, {@code 100.0}
 * and {@code 1e2} are the same one, as many JSON writers put it (Python's for a float).
 */
public final class WholeNumbers {

    private WholeNumbers() {
    }

    /** Whether {@code number} has no fraction, however it was written. */
    public static boolean isWhole(BigDecimal number) {
        return number.signum() == 0 || number.stripTrailingZeros().scale() <= 0;
    }

    /** Whether {@code number} lies within {@code min..max}. */
    public static boolean isWithin(BigDecimal number, long min, long max) {
        return number.compareTo(BigDecimal.valueOf(min)) >= 0 && number.compareTo(BigDecimal.valueOf(max)) <= 0;
    }
}
