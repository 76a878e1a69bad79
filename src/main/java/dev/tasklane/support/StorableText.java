package dev.tasklane.support;

import java.util.Map;

import tools.jackson.databind.JsonNode;

/**
 * What PostgreSQL can store: its {@code text} holds no NUL, {@code jsonb} no {@code \u0000}
 * escape, and neither half a surrogate pair (the driver would send it as '?'). Input that breaks
 * these rules is refused at the API; output of handlers and remote servers is made to follow them
 * before it reaches SQL, because one such value fails the whole statement it travels in.
 */
public final class StorableText {

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

    /** Whether every string in a JSON value, keys included, can be stored. */
    public static boolean isStorable(JsonNode node) {
        if (node.isString()) {
            return isStorable(node.stringValue());
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> property : node.properties()) {
                if (!isStorable(property.getKey()) || !isStorable(property.getValue())) {
                    return false;
                }
            }
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                if (!isStorable(element)) {
                    return false;
                }
            }
        }
        return true;
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
