package dev.tasklane.api;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/** Whether a raw request path is ASCII whose percent-escapes decode to valid UTF-8. */
final class Utf8Paths {

    private Utf8Paths() {
    }

    static boolean isUtf8(@Nullable String rawPath) {
        if (rawPath == null) {
            return true;
        }
        byte[] bytes = new byte[rawPath.length()];
        int length = 0;
        for (int i = 0; i < rawPath.length(); i++) {
            char c = rawPath.charAt(i);
            if (c > 0x7E || c < 0x20) {
                return false;
            }
            if (c == '%') {
                if (i + 2 >= rawPath.length()) {
                    return false;
                }
                int high = Character.digit(rawPath.charAt(i + 1), 16);
                int low = Character.digit(rawPath.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    return false;
                }
                bytes[length++] = (byte) (high * 16 + low);
                i += 2;
            } else {
                bytes[length++] = (byte) c;
            }
        }
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, length));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
