package dev.tasklane.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: after attempt n the delay is drawn from [d/2, d], where
 * d = base * 2^(n-1) capped at max. Half of it is random so that tasks that failed together
 * (a downstream outage) do not all come back at the same instant.
 *
 * @param base the delay after the first attempt
 * @param max the cap
 */
public record Backoff(Duration base, Duration max) {

    public Duration delayAfter(int attempt) {
        long capMillis = max.toMillis();
        long exponential = base.toMillis();
        for (int i = 1; i < attempt && exponential < capMillis; i++) {
            exponential *= 2;
        }
        long ceiling = Math.min(exponential, capMillis);
        long half = ceiling / 2;
        return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(ceiling - half + 1));
    }
}
