package dev.tasklane.worker;

import java.time.Duration;

import org.junit.jupiter.api.RepeatedTest;

import static org.assertj.core.api.Assertions.assertThat;

final class BackoffTests {

    private final Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(1));

    @RepeatedTest(20)
    void theDelayDoublesPerAttemptWithJitterInTheUpperHalf() {
        assertThat(backoff.delayAfter(1)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(1));
        assertThat(backoff.delayAfter(2)).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(2));
        assertThat(backoff.delayAfter(4)).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(8));
    }

    @RepeatedTest(20)
    void theDelayNeverExceedsTheCap() {
        assertThat(backoff.delayAfter(7)).isBetween(Duration.ofSeconds(30), Duration.ofMinutes(1));
        assertThat(backoff.delayAfter(100)).isBetween(Duration.ofSeconds(30), Duration.ofMinutes(1));
    }
}
