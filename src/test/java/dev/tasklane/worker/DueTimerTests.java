package dev.tasklane.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

final class DueTimerTests {

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final DueTimer timer = new DueTimer(clock);
    private final List<Long> firedAt = new CopyOnWriteArrayList<>();
    private final Disposable listening = timer.fires().subscribe(fire -> firedAt.add(clock.now(TimeUnit.MILLISECONDS)));

    @AfterEach
    void stop() {
        listening.dispose();
        clock.dispose();
    }

    @Test
    void itFiresOnceAtTheEarliestTimeItWasGiven() {
        timer.after(Duration.ofSeconds(5));
        timer.after(Duration.ofSeconds(2));
        timer.after(Duration.ofSeconds(9));
        clock.advanceTimeBy(Duration.ofSeconds(20));
        assertThat(firedAt).containsExactly(2000L);
    }

    @Test
    void aTimeCenturiesAwayFiresAfterADayAndLeavesEarlierOnesAlone() {
        // runAt may be as late as 9999-12-31: further than a long of nanoseconds reaches (292 years)
        timer.after(Duration.ofDays(366L * 8000));
        clock.advanceTimeBy(Duration.ofHours(23));
        timer.after(Duration.ofMinutes(30));
        clock.advanceTimeBy(Duration.ofDays(2));
        timer.after(Duration.ofDays(366L * 8000));
        clock.advanceTimeBy(Duration.ofDays(1));
        // the earlier time still wins; a far one fires after a day, and the claim it causes sets it again
        assertThat(firedAt).containsExactly(Duration.ofMinutes(23 * 60 + 30).toMillis(),
                Duration.ofHours(23).plusDays(3).toMillis());
    }

    @Test
    void afterFiringItCanBeSetAgainForALaterTime() {
        timer.after(Duration.ofSeconds(1));
        clock.advanceTimeBy(Duration.ofSeconds(1));
        timer.after(Duration.ofSeconds(3));
        clock.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(firedAt).containsExactly(1000L, 4000L);
    }

    @Test
    void aCancelledTimerDoesNotFire() {
        timer.after(Duration.ofSeconds(1));
        timer.cancel();
        clock.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(firedAt).isEmpty();
    }
}
