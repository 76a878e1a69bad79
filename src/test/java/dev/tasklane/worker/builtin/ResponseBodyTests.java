package dev.tasklane.worker.builtin;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class ResponseBodyTests {

    private static final int LIMIT = 16;

    @Test
    void validUtf8WithoutNulIsKeptAsText() {
        ResponseBody body = ResponseBody.of("héllo ✓".getBytes(StandardCharsets.UTF_8), LIMIT);
        assertThat(body.encoding()).isEqualTo("utf-8");
        assertThat(body.text()).isEqualTo("héllo ✓");
    }

    @Test
    void aNulByteMakesTheBodyBase64() {
        byte[] bytes = {'a', 0, 'b'};
        ResponseBody body = ResponseBody.of(bytes, LIMIT);
        assertThat(body.encoding()).isEqualTo("base64");
        assertThat(Base64.getDecoder().decode(body.text())).containsExactly(bytes);
    }

    @Test
    void invalidUtf8MakesTheBodyBase64() {
        byte[] bytes = {(byte) 0xFF, (byte) 0xD8, (byte) 0xFF, (byte) 0xE0};
        ResponseBody body = ResponseBody.of(bytes, LIMIT);
        assertThat(body.encoding()).isEqualTo("base64");
        assertThat(Base64.getDecoder().decode(body.text())).containsExactly(bytes);
    }

    @Test
    void aTextBodyOverTheLimitIsCutOnACharacterBoundary() {
        // 'é' is two bytes: the limit of 16 falls after 15 bytes of ASCII, inside the next 'é'
        byte[] bytes = ("abcdefghijklmno" + "ééé").getBytes(StandardCharsets.UTF_8);
        ResponseBody body = ResponseBody.of(bytes, LIMIT);
        assertThat(body.encoding()).isEqualTo("utf-8");
        assertThat(body.text()).isEqualTo("abcdefghijklmno");
        assertThat(body.bytes()).isEqualTo(15);
    }

    @Test
    void aBinaryBodyOverTheLimitIsCutToTheLimit() {
        byte[] bytes = new byte[40];
        ResponseBody body = ResponseBody.of(bytes, LIMIT);
        assertThat(body.encoding()).isEqualTo("base64");
        assertThat(Base64.getDecoder().decode(body.text())).hasSize(LIMIT);
    }

    @Test
    void aTruncatedCharacterAtTheVeryEndOfAnUncutBodyIsNotText() {
        byte[] bytes = {'o', 'k', (byte) 0xC3};
        assertThat(ResponseBody.of(bytes, LIMIT).encoding()).isEqualTo("base64");
    }

    @Test
    void anErrorSummaryNeverCarriesBinaryContent() {
        assertThat(ResponseBody.of(new byte[] {0, 1, 2}, LIMIT).summary(500)).isEqualTo("3 bytes of binary content");
        assertThat(ResponseBody.of("oops".getBytes(StandardCharsets.UTF_8), LIMIT).summary(500)).isEqualTo("oops");
    }
}
