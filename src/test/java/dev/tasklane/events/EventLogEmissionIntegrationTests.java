package dev.tasklane.events;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.core.CoreSubscriber;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The live stream's chain of ids against an emission that fails part-way through its subscribers. */
final class EventLogEmissionIntegrationTests extends IntegrationTest {

    @Autowired
    private EventLog eventLog;

    /**
     * A subscriber that throws from {@code onNext} stops the emission before the subscribers after
     * it: they miss that event, and the next one they get must not look linked to the one before.
     */
    @Test
    void subscribersThatAnEmissionDidNotReachSeeABreakInTheChain() {
        String queue = TaskFixtures.uniqueQueue("emission");
        String breaking = TaskFixtures.uniqueQueue("emission-breaks");
        Tasks tasks = new Tasks(api());
        Listener thrower = new Listener(breaking);
        Listener observer = new Listener(null);
        // A context just started has a reader without a horizon yet, whose first one may cover the
        // first event below: that event would then never be emitted live.
        await().atMost(Duration.ofSeconds(20)).until(() -> eventLog.delivered() >= 0);
        eventLog.live().subscribe(thrower); // first: the emission reaches it before the observer
        eventLog.live().subscribe(observer);
        try {
            long before = queuedEvent(queue, tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue());
            await().atMost(Duration.ofSeconds(20)).until(() -> observer.ids().contains(before));
            long missed = queuedEvent(breaking, tasks.enqueue(breaking, "{\"type\": \"noop\"}").get("id").longValue());
            await().atMost(Duration.ofSeconds(20)).until(() -> eventLog.delivered() >= missed);
            long after = queuedEvent(queue, tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue());
            await().atMost(Duration.ofSeconds(20)).until(() -> observer.ids().contains(after));

            assertThat(thrower.thrown).isTrue();
            assertThat(observer.ids()).doesNotContain(missed);
            LiveEvent next = observer.received.stream().filter(item -> item.event().id() == after).findFirst().orElseThrow();
            assertThat(next.previousId()).as("the link of the event after the one the observer missed")
                    .isNotEqualTo(before).isEqualTo(missed);
        } finally {
            thrower.cancel();
            observer.cancel();
        }
    }

    private static long queuedEvent(String queue, long taskId) {
        return Long.parseLong(Sql.column("SELECT id FROM task_event WHERE task_id = ? AND queue = ? AND name = 'queued'",
                taskId, queue).get(0));
    }

    /** A plain subscriber, no operator around it: what it throws reaches the emitter. */
    private static final class Listener implements CoreSubscriber<LiveEvent> {

        private final String throwOn;
        final List<LiveEvent> received = new CopyOnWriteArrayList<>();
        volatile boolean thrown;
        private volatile Subscription subscription;

        Listener(String throwOn) {
            this.throwOn = throwOn;
        }

        List<Long> ids() {
            return received.stream().map(item -> item.event().id()).toList();
        }

        void cancel() {
            subscription.cancel();
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            this.subscription = subscription;
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(LiveEvent item) {
            if (!thrown && item.event() != null && item.event().queue().equals(throwOn)) {
                thrown = true;
                throw new IllegalStateException("a subscriber that breaks the emission");
            }
            received.add(item);
        }

        @Override
        public void onError(Throwable failure) {
        }

        @Override
        public void onComplete() {
        }
    }
}
