package dev.tasklane.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anySet;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.queue.ClaimHandoff;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskState;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.Wakeups;
import dev.tasklane.queue.Wakeups.Wakeup;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * When the pipeline of one queue sends a claim, with the database replaced by answers given in
 * turn: every claim costs PostgreSQL a plan and a scan, so none is sent that cannot find work.
 */
class QueueWorkerTests {

    private static final String QUEUE = "q";
    private static final Duration QUIET = Duration.ofMillis(300);

    private final TaskStore store = mock(TaskStore.class);
    private final ClaimHandoff handoff = mock(ClaimHandoff.class);
    private final BatchCompleter completer = mock(BatchCompleter.class);
    private final Wakeups wakeups = mock(Wakeups.class);
    private final Sinks.Many<Wakeup> wakes = Sinks.many().multicast().directBestEffort();
    private final Queue<List<Task>> answers = new ConcurrentLinkedQueue<>();
    private final AtomicInteger claims = new AtomicInteger();
    private final AtomicInteger outcomes = new AtomicInteger();
    private Mono<Void> running = Mono.empty(); // what each handler does
    private QueueWorker worker;

    @BeforeEach
    void database() {
        when(wakeups.of(QUEUE)).thenReturn(wakes.asFlux());
        when(wakeups.missedWakeups()).thenReturn(Flux.never());
        when(store.flowControlled(QUEUE)).thenReturn(false);
        when(store.nextDue(eq(QUEUE), anySet())).thenReturn(Mono.empty());
        when(completer.submit(any())).thenAnswer(invocation -> Mono.fromRunnable(outcomes::incrementAndGet));
        when(handoff.claim(any(), any(), any())).thenAnswer(invocation -> {
            claims.incrementAndGet();
            List<Task> answer = answers.poll();
            return Mono.just(answer == null ? List.<Task>of() : answer);
        });
    }

    @AfterEach
    void stop() {
        if (worker != null) {
            worker.stop();
        }
    }

    @Test
    void aTaskEndingOnADrainedQueueSendsNoFurtherClaim() throws InterruptedException {
        start(4);
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 1); // the first poll, at start

        answers.add(List.of(task(1)));
        wakes.tryEmitNext(new Wakeup(QUEUE, null));
        await().atMost(Duration.ofSeconds(5)).until(() -> outcomes.get() == 1);
        Thread.sleep(QUIET.toMillis());

        assertThat(claims).as("the poll and the claim that took the task, one of four free slots").hasValue(2);
    }

    @Test
    void aTaskEndingAfterAClaimFilledEverySlotClaimsAgainAtOnce() {
        start(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 1);

        answers.add(List.of(task(1)));
        answers.add(List.of(task(2)));
        wakes.tryEmitNext(new Wakeup(QUEUE, null));

        await().atMost(Duration.ofSeconds(5)).until(() -> outcomes.get() == 2);
        assertThat(claims.get()).as("the poll, the full claim, and the claim its freed slot sent").isGreaterThanOrEqualTo(3);
    }

    @Test
    void aFailedClaimLetsTheNextFreedSlotClaimAgain() {
        Sinks.Empty<Void> firstTaskEnds = Sinks.empty();
        running = firstTaskEnds.asMono();
        answers.add(List.of(task(1)));
        start(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 1); // the poll takes the task; drained

        doAnswer(invocation -> {
            claims.incrementAndGet();
            return Mono.error(new IllegalStateException("connection lost"));
        }).when(handoff).claim(any(), any(), any());
        wakes.tryEmitNext(new Wakeup(QUEUE, null));
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 2);

        // A claim that failed says nothing about what waits: the slot that frees next looks.
        firstTaskEnds.tryEmitEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 3);
    }

    @Test
    void aFailingSourceOfWakeUpsIsListenedToAgainAndTheRunningHandlersGoOn() {
        AtomicReference<Sinks.Many<Wakeup>> listening = new AtomicReference<>();
        when(wakeups.of(QUEUE)).thenReturn(Flux.defer(() -> {
            Sinks.Many<Wakeup> sink = Sinks.many().multicast().directBestEffort();
            listening.set(sink);
            return sink.asFlux();
        }));
        Sinks.Empty<Void> taskEnds = Sinks.empty();
        running = taskEnds.asMono();
        answers.add(List.of(task(1)));
        start(2);
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 1); // the poll takes the task

        Sinks.Many<Wakeup> failing = listening.get();
        failing.tryEmitError(new IllegalStateException("a bug in a source of wake-ups"));
        // listened to again: a poll first, then wake-ups work as before
        await().atMost(Duration.ofSeconds(5)).until(() -> listening.get() != failing && claims.get() == 2);
        listening.get().tryEmitNext(new Wakeup(QUEUE, null));
        await().atMost(Duration.ofSeconds(5)).until(() -> claims.get() == 3);

        taskEnds.tryEmitEmpty();
        await().atMost(Duration.ofSeconds(5)).until(() -> outcomes.get() == 1); // its handler was not cancelled
    }

    private void start(int concurrency) {
        TaskHandler noop = new TaskHandler() {
            @Override
            public String type() {
                return "noop";
            }

            @Override
            public Mono<?> handle(TaskContext context) {
                return running;
            }
        };
        ObjectProvider<ObservationRegistry> noRegistry = new StaticListableBeanFactory().getBeanProvider(ObservationRegistry.class);
        QueueWorker.Tools tools = new QueueWorker.Tools("w", store, store, handoff, new HandlerRegistry(List.of(noop)),
                completer, wakeups, new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(1)), JsonMapper.builder().build(),
                Duration.ofSeconds(30), Duration.ofHours(1), 1024, Schedulers.parallel(), new TaskTracing(noRegistry, false));
        LeaseKeeper keeper = new LeaseKeeper((leases, lease) -> Flux.empty(), Duration.ofSeconds(30), Schedulers.parallel());
        worker = new QueueWorker(new QueueSpec(QUEUE, concurrency), keeper, tools);
        worker.start();
    }

    private static Task task(long id) {
        Instant now = Instant.now();
        return new Task(id, QUEUE, "noop", null, TaskState.RUNNING, 0, 1, 5, now, now, now, null, "w",
                UUID.randomUUID(), now.plusSeconds(30), 3600, now.plusSeconds(3600), null, null, null, null,
                null, null, 0, 100, null, null, null, null);
    }
}
