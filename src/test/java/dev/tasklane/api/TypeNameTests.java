package dev.tasklane.api;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class TypeNameTests {

    @Test
    void aTypeNameIsWhatThePatternAccepts() {
        String alphabet = "aZ09_.:-/ é\u0000😀\t";
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 50_000; i++) {
            int length = random.nextInt(0, 6);
            StringBuilder name = new StringBuilder();
            for (int j = 0; j < length; j++) {
                name.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String type = name.toString();
            assertThat(EnqueueRequests.isTypeName(type)).as(type)
                    .isEqualTo(EnqueueRequests.TYPE_NAME.matcher(type).matches());
        }
        assertThat(EnqueueRequests.isTypeName("a".repeat(128))).isTrue();
        assertThat(EnqueueRequests.isTypeName("a".repeat(129))).isFalse();
        assertThat(EnqueueRequests.isTypeName("email.send:v2-x_y")).isTrue();
    }
}
