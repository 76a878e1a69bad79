package dev.tasklane.support;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.awaitility.Awaitility.await;

class PeriodicJobTests {

    @Test
    void aRoundThatFailsOrThrowsIsLoggedAndTheNextOneRuns() {
        AtomicInteger rounds = new AtomicInteger();
        PeriodicJob job = new PeriodicJob("test job", Duration.ofMillis(10)) {
            @Override
            protected Mono<?> runOnce() {
                int round = rounds.incrementAndGet();
                if (round == 1) {
                    throw new IllegalStateException("thrown before any Mono exists");
                }
                return round == 2 ? Mono.error(new IllegalStateException("a failed round")) : Mono.empty();
            }
        };
        job.start();
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> rounds.get() >= 4);
        } finally {
            job.stop();
        }
    }
}
