package dev.tasklane.worker.builtin;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

import dev.tasklane.support.StorableText;

/**
 * The body of an {@code http} task's response, in a form PostgreSQL can store whatever the
 * server sent: its text ({@code utf-8}) when the bytes are valid UTF-8 without NUL, else the
 * bytes in base64 ({@code base64}). A body over the limit is cut to it, on a character boundary
 * for text. Binary bodies are ordinary (images, protobuf, compressed data); stored as text they
 * failed the statement that carried them, and every other outcome in it.
 *
 * @param text the body as the result carries it
 * @param encoding {@code utf-8} or {@code base64}
 * @param bytes how many bytes of the body were kept
 */
record ResponseBody(String text, String encoding, int bytes) {

    static final String UTF_8 = "utf-8";
    static final String BASE_64 = "base64";

    /** The body from its first bytes; more than {@code limit} of them means it was longer and is cut. */
    static ResponseBody of(byte[] received, int limit) {
        boolean cut = received.length > limit;
        byte[] kept = cut ? Arrays.copyOf(received, limit) : received;
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer chars = CharBuffer.allocate(kept.length);
        ByteBuffer in = ByteBuffer.wrap(kept);
        // A cut body may end inside a character: decoding as not yet ended leaves that tail unread.
        CoderResult decoded = decoder.decode(in, chars, !cut);
        if (!decoded.isError() && !cut) {
            decoded = decoder.flush(chars);
        }
        if (!decoded.isError()) {
            String text = chars.flip().toString();
            if (text.indexOf('\0') < 0) {
                return new ResponseBody(text, UTF_8, in.position());
            }
        }
        return new ResponseBody(Base64.getEncoder().encodeToString(kept), BASE_64, kept.length);
    }

    boolean isEmpty() {
        return bytes == 0;
    }

    /** For an error message: the start of the text, or what kind of body it was. */
    String summary(int maxChars) {
        if (!UTF_8.equals(encoding)) {
            return bytes + " bytes of binary content";
        }
        String clean = StorableText.sanitize(text, maxChars);
        return clean.length() < text.length() ? clean + "..." : clean;
    }
}
