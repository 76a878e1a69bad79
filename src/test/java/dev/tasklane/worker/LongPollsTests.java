package dev.tasklane.worker;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.queue.Wakeups.Wakeup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import static org.awaitility.Awaitility.await;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

/** The long polls' own plumbing, with the database replaced. */
class LongPollsTests {

    private final Wakeups wakeups = mock(Wakeups.class);
    private final LongPolls polls = new LongPolls(mock(TaskStore.class), mock(ClaimHandoff.class), wakeups,
            Schedulers.parallel());

    @AfterEach
    void stop() {
        polls.stop();
    }

    @Test
    void aFailingSourceOfWakeUpsIsListenedToAgain() {
        AtomicInteger subscriptions = new AtomicInteger();
        AtomicReference<Sinks.Many<Wakeup>> listening = new AtomicReference<>();
        when(wakeups.all()).thenReturn(Flux.defer(() -> {
            subscriptions.incrementAndGet();
            Sinks.Many<Wakeup> sink = Sinks.many().multicast().directBestEffort();
            listening.set(sink);
            return sink.asFlux();
        }));
        when(wakeups.missedWakeups()).thenReturn(Flux.never());
        polls.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> subscriptions.get() == 1);

        listening.get().tryEmitError(new IllegalStateException("a bug in a source of wake-ups"));
        await().atMost(Duration.ofSeconds(5)).until(() -> subscriptions.get() == 2);
    }

    @Test
    void aFailingSignalOfMissedWakeUpsLeavesTheSafetyPollRunning() {
        AtomicInteger subscriptions = new AtomicInteger();
        when(wakeups.all()).thenReturn(Flux.never());
        when(wakeups.missedWakeups()).thenReturn(Flux.defer(() -> subscriptions.incrementAndGet() == 1
                ? Flux.error(new IllegalStateException("a bug in the reconnect signal")) : Flux.never()));
        polls.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> subscriptions.get() == 2);
    }
}
