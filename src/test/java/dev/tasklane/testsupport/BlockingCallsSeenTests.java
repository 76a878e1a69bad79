package dev.tasklane.testsupport;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/** BlockHound watches every test JVM, and what it finds is kept rather than thrown. */
final class BlockingCallsSeenTests {

    @Test
    void aBlockingCallOnANonBlockingThreadIsRecordedAndTheCallGoesOn() {
        int before = BlockingCallsSeen.found();

        String outcome = Mono.fromCallable(() -> {
                    Thread.sleep(1);
                    return "slept";
                })
                .subscribeOn(Schedulers.parallel())
                .block(Duration.ofSeconds(10));

        assertThat(outcome).isEqualTo("slept");
        assertThat(BlockingCallsSeen.found()).isEqualTo(before + 1);
        assertThat(BlockingCallsSeen.seen()).last().satisfies(seen -> {
            assertThat(seen.thread()).startsWith("parallel-");
            assertThat(seen.error().getMessage()).contains("sleep");
        });
        BlockingCallsSeen.madeOnPurpose(1);
    }
}
