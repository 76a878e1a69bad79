package dev.tasklane.support;

import java.math.BigDecimal;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * What PostgreSQL can store: its {@code text} holds no NUL, {@code jsonb} no {@code \u0000}
 * escape, and neither half a surrogate pair (the driver would send it as '?'); {@code jsonb}
 * holds numbers of bounded length, and no NaN or infinity. Input that breaks
 * these rules is refused at the API; output of handlers and remote servers is made to follow them
 * before it reaches SQL, because one such value fails the whole statement it travels in.
 */
public final class StorableText {

    /** The most digits a number may have before, and after, its decimal point. */
    public static final int MAX_DIGITS = 1000;
    private static final String BAD_TEXT = "must not contain NUL characters or unpaired surrogates"
            + " (PostgreSQL jsonb cannot store them)";
    private static final String LONG_NUMBER = "must not hold a number with more than " + MAX_DIGITS
            + " digits before or after the decimal point";
    private static final String NOT_A_NUMBER = "must not hold NaN or infinite numbers";

    private StorableText() {
    }

    /** Whether {@code text} can be stored as it is. */
    public static boolean isStorable(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\0') {
                return false;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why a JSON value cannot be stored as it is, as the end of a sentence about the field
     * ("must not ..."), or null when it can. Numbers must have at most {@value #MAX_DIGITS}
     * digits before and after the decimal point when written out: PostgreSQL keeps them exactly
     * and prints them in full, so {@code 1e100000}, a few bytes sent, would be answered as
     * 100,001 digits (and {@code 1e200000} is beyond what it can store at all).
     */
    public static @Nullable String unstorable(JsonNode node) {
        if (node.isString()) {
            return isStorable(node.stringValue()) ? null : BAD_TEXT;
        }
        if (node.isNumber()) {
            return unstorableNumber(node);
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> property : node.properties()) {
                if (!isStorable(property.getKey())) {
                    return BAD_TEXT;
                }
                String why = unstorable(property.getValue());
                if (why != null) {
                    return why;
                }
            }
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                String why = unstorable(element);
                if (why != null) {
                    return why;
                }
            }
        }
        return null;
    }

    private static @Nullable String unstorableNumber(JsonNode number) {
        if (number.isBigInteger() || number.isBigDecimal()) {
            BigDecimal value = number.decimalValue();
            int before = value.precision() - value.scale();
            return before <= MAX_DIGITS && value.scale() <= MAX_DIGITS ? null : LONG_NUMBER;
        }
        // a double only comes from a Java handler's result: requests are read as BigDecimal
        return number.isIntegralNumber() || Double.isFinite(number.doubleValue()) ? null : NOT_A_NUMBER;
    }

    /**
     * {@code text} without NULs, with every unpaired surrogate replaced by U+FFFD, and cut to at
     * most {@code maxChars} code points (never inside a pair): for error texts, which must be
     * stored whatever produced them.
     */
    public static String sanitize(String text, int maxChars) {
        StringBuilder clean = new StringBuilder(Math.min(text.length(), maxChars * 2));
        int codePoints = 0;
        for (int i = 0; i < text.length() && codePoints < maxChars; i++) {
            char c = text.charAt(i);
            if (c == '\0') {
                continue;
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                clean.append(c).append(text.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                clean.append('\uFFFD');
            } else {
                clean.append(c);
            }
            codePoints++;
        }
        return clean.toString();
    }
}
