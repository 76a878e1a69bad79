package dev.tasklane.support;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

final class StorableTextTests {

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void textWithNulOrALoneSurrogateCannotBeStored() {
        assertThat(StorableText.isStorable("plain ✓ 😀")).isTrue();
        assertThat(StorableText.isStorable("a\u0000b")).isFalse();
        assertThat(StorableText.isStorable("a\uD800b")).isFalse();
        assertThat(StorableText.isStorable("a\uDC00")).isFalse();
    }

    @Test
    void aJsonValueIsStorableOnlyIfEveryStringInItIs() {
        assertThat(StorableText.isStorable(json.readTree("{\"a\": [1, \"x\", {\"b\": null}]}"))).isTrue();
        assertThat(StorableText.isStorable(json.readTree("{\"a\": [\"x\\u0000\"]}"))).isFalse();
        assertThat(StorableText.isStorable(json.readTree("{\"k\\u0000\": 1}"))).isFalse();
    }

    @Test
    void sanitizingDropsNulsReplacesLoneSurrogatesAndCutsOnCodePoints() {
        assertThat(StorableText.sanitize("a\u0000b\uD800c", 100)).isEqualTo("ab\uFFFDc");
        assertThat(StorableText.sanitize("😀😀😀", 2)).isEqualTo("😀😀");
        assertThat(StorableText.isStorable(StorableText.sanitize("\uDC00\u0000\uD800", 10))).isTrue();
    }
}
