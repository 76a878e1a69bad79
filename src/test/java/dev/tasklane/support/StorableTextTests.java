package dev.tasklane.support;

import java.util.List;
import java.util.Map;

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
        assertThat(StorableText.unstorable(json.readTree("{\"a\": [1, \"x\", {\"b\": null}]}"))).isNull();
        assertThat(StorableText.unstorable(json.readTree("{\"a\": [\"x\\u0000\"]}"))).contains("NUL");
        assertThat(StorableText.unstorable(json.readTree("{\"k\\u0000\": 1}"))).contains("NUL");
    }

    @Test
    void aNumberIsStorableWithAtMostAThousandDigitsBeforeAndAfterThePoint() {
        for (String number : List.of("1e999", "-9.5e998", "1e-1000", "0.10", "0e999", "123456789012345678901234567890",
                "1" + "0".repeat(998) + ".5")) {
            assertThat(StorableText.unstorable(ExactJson.MAPPER.readTree(number))).as(number).isNull();
        }
        for (String number : List.of("1e1000", "1e-1001", "0e1000", "0.00e-999", "[1, {\"n\": 5e1000}]")) {
            assertThat(StorableText.unstorable(ExactJson.MAPPER.readTree(number))).as(number).contains("1000 digits");
        }
        assertThat(StorableText.unstorable(json.valueToTree(Map.of("ratio", Double.NaN)))).contains("NaN");
        assertThat(StorableText.unstorable(json.valueToTree(List.of(1.5, Long.MAX_VALUE)))).isNull();
    }

    @Test
    void storedTextWritesNumbersOutInFullAsPostgresqlPrintsThem() {
        assertThat(ExactJson.text(ExactJson.MAPPER.readTree("[1e3, 0.10, 12345678901234567.25, 1e-3]")))
                .isEqualTo("[1000,0.10,12345678901234567.25,0.001]");
    }

    @Test
    void sanitizingDropsNulsReplacesLoneSurrogatesAndCutsOnCodePoints() {
        assertThat(StorableText.sanitize("a\u0000b\uD800c", 100)).isEqualTo("ab\uFFFDc");
        assertThat(StorableText.sanitize("😀😀😀", 2)).isEqualTo("😀😀");
        assertThat(StorableText.isStorable(StorableText.sanitize("\uDC00\u0000\uD800", 10))).isTrue();
    }
}
