package dev.tasklane.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.client.testing.LosingProxy;
import dev.tasklane.client.testing.TasklaneService;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.observation.transport.ReceiverContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/** TasklaneWorker against the real service: handlers, leases, failures and a graceful stop. */
final class TasklaneWorkerTests {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static TasklaneService service;
    private static TasklaneClient client;

    @BeforeAll
    static void start() throws Exception {
        service = TasklaneService.start(Map.of("TASKLANE_RESCUE_INTERVAL", "1s"));
        client = TasklaneClient.builder(service.baseUrl()).token(TasklaneService.TOKEN).build();
    }

    @AfterAll
    static void stop() throws Exception {
        service.close();
    }

    @Test
    void reactiveAndBlockingHandlersRunWithinTheConcurrencyAndBlockingOnesNeverOnAnEventLoop() {
        AtomicInteger runningNow = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Set<String> blockingThreads = ConcurrentHashMap.newKeySet();
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-mixed").concurrency(3).workerId("mixed")
                .handler("double", task -> Mono.delay(Duration.ofMillis(50))
                        .map(tick -> Map.of("doubled", task.payload().get("n").intValue() * 2)))
                .blockingHandler("shout", task -> {
                    mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
                    blockingThreads.add(Thread.currentThread().getName());
                    assertThat(Schedulers.isInNonBlockingThread()).isFalse();
                    Thread.sleep(100);
                    runningNow.decrementAndGet();
                    return task.payload(Map.class).get("word").toString().toUpperCase();
                })
                .build().start();
        try {
            List<Long> doubled = new ArrayList<>();
            List<Long> shouted = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                doubled.add(client.enqueue("pull-mixed", NewTask.of("double", Map.of("n", i))).block(PATIENCE).id());
                shouted.add(client.enqueue("pull-mixed", NewTask.of("shout", Map.of("word", "w" + i))).block(PATIENCE).id());
            }
            for (int i = 0; i < 10; i++) {
                assertThat(awaitTerminal(doubled.get(i)).result().get("doubled").intValue()).isEqualTo(i * 2);
                assertThat(awaitTerminal(shouted.get(i)).result().asString()).isEqualTo("W" + i);
            }
            assertThat(mostAtOnce.get()).isBetween(1, 3);
            assertThat(blockingThreads).allSatisfy(name -> assertThat(name).startsWith("boundedElastic"));
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void aFailingHandlerIsRetriedAndAPermanentFailureFailsAtOnce() {
        AtomicInteger flakyCalls = new AtomicInteger();
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-failing").workerId("failing")
                .handler("flaky", task -> flakyCalls.incrementAndGet() == 1
                        ? Mono.error(new IllegalStateException("first call fails")) : Mono.just("ok"))
                .blockingHandler("doomed", task -> {
                    throw new PermanentFailure("cannot ever work");
                })
                .build().start();
        try {
            long flaky = client.enqueue("pull-failing", NewTask.of("flaky").withMaxAttempts(3)).block(PATIENCE).id();
            long doomed = client.enqueue("pull-failing", NewTask.of("doomed").withMaxAttempts(5)).block(PATIENCE).id();
            Task flakyDone = awaitTerminal(flaky);
            assertThat(flakyDone.state()).isEqualTo("succeeded");
            assertThat(flakyDone.attempt()).isEqualTo(2);
            Task doomedDone = awaitTerminal(doomed);
            assertThat(doomedDone.state()).isEqualTo("failed");
            assertThat(doomedDone.attempt()).isEqualTo(1);
            assertThat(doomedDone.lastError()).contains("cannot ever work");
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void heartbeatsKeepALongTasksLeaseAlive() {
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-long").workerId("long").leaseSeconds(2)
                .handler("long", task -> Mono.delay(Duration.ofSeconds(5)).thenReturn("done"))
                .build().start();
        try {
            long id = client.enqueue("pull-long", NewTask.of("long")).block(PATIENCE).id();
            Task done = awaitTerminal(id);
            assertThat(done.state()).isEqualTo("succeeded");
            assertThat(done.attempt()).as("never rescued and run again").isEqualTo(1);
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void aCompleteThatNeverArrivesIsSentAgainAndTheTaskSucceedsInItsFirstAttempt() throws Exception {
        try (LosingProxy proxy = LosingProxy.losingRequestsTo(service.port(), "/complete", 1)) {
            AtomicInteger calls = new AtomicInteger();
            Task done = runToTheEnd(TasklaneWorker.builder(proxy.client(), "pull-lost-complete").workerId("lost-complete")
                    .handler("once", task -> Mono.fromSupplier(() -> "run " + calls.incrementAndGet())),
                    "pull-lost-complete", NewTask.of("once"), PATIENCE);
            assertThat(proxy.answersLost()).as("the first complete was lost").isEqualTo(1);
            assertThat(done.state()).isEqualTo("succeeded");
            assertThat(done.result().asString()).isEqualTo("run 1");
            assertThat(done.attempt()).as("not recorded as a failure and run again").isEqualTo(1);
            assertThat(calls.get()).isEqualTo(1);
        }
    }

    @Test
    void aCompleteWhoseAnswerIsLostIsNotRecordedAgainNorTurnedIntoAFailure() throws Exception {
        try (LosingProxy proxy = LosingProxy.losingAnswersTo(service.port(), "/complete", 1)) {
            AtomicInteger calls = new AtomicInteger();
            TasklaneWorker worker = TasklaneWorker.builder(proxy.client(), "pull-lost-answer").workerId("lost-answer")
                    .handler("once", task -> Mono.fromSupplier(() -> "run " + calls.incrementAndGet()))
                    .build().start();
            try {
                long id = client.enqueue("pull-lost-answer", NewTask.of("once")).block(PATIENCE).id();
                Task done = awaitTerminal(id);
                assertThat(proxy.answersLost()).isEqualTo(1);
                assertThat(done.state()).isEqualTo("succeeded");
                assertThat(done.result().asString()).isEqualTo("run 1");
                assertThat(done.attempt()).isEqualTo(1);
                assertThat(done.lastError()).isNull();
                // The worker goes on to the next task.
                long next = client.enqueue("pull-lost-answer", NewTask.of("once")).block(PATIENCE).id();
                assertThat(awaitTerminal(next).result().asString()).isEqualTo("run 2");
            } finally {
                worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
            }
        }
    }

    @Test
    void aCompleteThatHangsWithoutAnAnswerIsSentAgainOnAnotherConnection() throws Exception {
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/complete", 1)) {
            Task done = runToTheEnd(TasklaneWorker.builder(proxy.client(), "pull-silent").workerId("silent").leaseSeconds(3)
                    .handler("once", task -> Mono.just("done")), "pull-silent", NewTask.of("once"), PATIENCE);
            assertThat(proxy.answersLost()).isEqualTo(1);
            assertThat(done.state()).isEqualTo("succeeded");
            assertThat(done.attempt()).as("recorded before the lease ran out").isEqualTo(1);
        }
    }

    @Test
    void aFailThatNeverArrivesIsSentAgainRatherThanLeftForTheLeaseToExpire() throws Exception {
        try (LosingProxy proxy = LosingProxy.losingRequestsTo(service.port(), "/fail", 1)) {
            Task done = runToTheEnd(TasklaneWorker.builder(proxy.client(), "pull-lost-fail").workerId("lost-fail")
                    .blockingHandler("doomed", task -> {
                        throw new PermanentFailure("cannot ever work");
                    }), "pull-lost-fail", NewTask.of("doomed").withMaxAttempts(5), Duration.ofSeconds(10));
            assertThat(proxy.answersLost()).isEqualTo(1);
            assertThat(done.state()).isEqualTo("failed");
            assertThat(done.attempt()).isEqualTo(1);
            assertThat(done.lastError()).contains("cannot ever work");
        }
    }

    @Test
    void aHeartbeatThatHangsWithoutAnAnswerDoesNotHoldBackTheNextOnes() throws Exception {
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/heartbeat", 1)) {
            AtomicInteger calls = new AtomicInteger();
            Task done = runToTheEnd(TasklaneWorker.builder(proxy.client(), "pull-silent-beat").workerId("silent-beat")
                    .leaseSeconds(2)
                    .handler("long", task -> Mono.delay(Duration.ofSeconds(5)).thenReturn("run " + calls.incrementAndGet())),
                    "pull-silent-beat", NewTask.of("long"), PATIENCE);
            assertThat(proxy.answersLost()).isEqualTo(1);
            assertThat(done.state()).isEqualTo("succeeded");
            assertThat(done.attempt()).as("never rescued and run again").isEqualTo(1);
            assertThat(done.result().asString()).isEqualTo("run 1");
        }
    }

    @Test
    void aClaimThatHangsWithoutAnAnswerIsGivenUpAndTheWorkerClaimsAgain() throws Exception {
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/claims", 1)) {
            Task done = runToTheEnd(TasklaneWorker.builder(proxy.client(), "pull-silent-claim").workerId("silent-claim")
                    .waitSeconds(1)
                    .handler("once", task -> Mono.just("done")), "pull-silent-claim", NewTask.of("once"), PATIENCE);
            assertThat(proxy.answersLost()).isEqualTo(1);
            assertThat(done.state()).isEqualTo("succeeded");
            assertThat(done.attempt()).isEqualTo(1);
        }
    }

    @Test
    void aStopWaitsForRunningHandlersAndHandsBackThoseThatOutliveTheGrace() {
        CountDownLatch started = new CountDownLatch(2);
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-stop").workerId("stopping").concurrency(2)
                .handler("quick", task -> {
                    started.countDown();
                    return Mono.delay(Duration.ofMillis(500)).thenReturn("finished");
                })
                .handler("endless", task -> {
                    started.countDown();
                    return Mono.never();
                })
                .build().start();
        long quick = client.enqueue("pull-stop", NewTask.of("quick")).block(PATIENCE).id();
        long endless = client.enqueue("pull-stop", NewTask.of("endless")).block(PATIENCE).id();
        await().atMost(PATIENCE).until(() -> started.getCount() == 0);

        worker.stop(Duration.ofSeconds(2)).block(PATIENCE);

        assertThat(client.get(quick).block(PATIENCE).state()).isEqualTo("succeeded");
        Task handedBack = client.get(endless).block(PATIENCE);
        assertThat(handedBack.state()).isEqualTo("queued");
        assertThat(handedBack.attempt()).as("a hand-back spends no attempt").isEqualTo(0);
        assertThat(worker.held()).isZero();
        // Nothing claims after the stop.
        long later = client.enqueue("pull-stop", NewTask.of("quick")).block(PATIENCE).id();
        await().during(Duration.ofSeconds(1)).atMost(PATIENCE)
                .until(() -> "queued".equals(client.get(later).block(PATIENCE).state()));
    }

    @Test
    void aStopEndsWhenAHandBackGetsNoAnswer() throws Exception {
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/release", 1)) {
            CountDownLatch started = new CountDownLatch(1);
            TasklaneWorker worker = TasklaneWorker.builder(proxy.client(), "pull-silent-stop").workerId("silent-stop")
                    .handler("endless", task -> {
                        started.countDown();
                        return Mono.never();
                    })
                    .build().start();
            client.enqueue("pull-silent-stop", NewTask.of("endless")).block(PATIENCE);
            await().atMost(PATIENCE).until(() -> started.getCount() == 0);

            long begun = System.nanoTime();
            worker.stop(Duration.ofSeconds(1)).block(PATIENCE);

            assertThat(Duration.ofNanos(System.nanoTime() - begun)).isLessThan(Duration.ofSeconds(15));
            assertThat(proxy.answersLost()).isEqualTo(1);
        }
    }

    @Test
    void aStopHandsBackWithAReleaseThatSpendsNeitherAnAttemptNorASnooze() {
        CountDownLatch started = new CountDownLatch(1);
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-release").workerId("releasing")
                .handler("endless", task -> {
                    started.countDown();
                    return Mono.never();
                })
                .build().start();
        long id = client.enqueue("pull-release", NewTask.of("endless").withMaxAttempts(1).withMaxSnoozes(0))
                .block(PATIENCE).id();
        await().atMost(PATIENCE).until(() -> started.getCount() == 0);

        worker.stop(Duration.ofMillis(500)).block(PATIENCE);

        Task handedBack = client.get(id).block(PATIENCE);
        assertThat(handedBack.state()).as("not failed by its only attempt, nor by a snooze too many").isEqualTo("queued");
        assertThat(handedBack.attempt()).isZero();
        assertThat(handedBack.snoozes()).isZero();
        assertThat(handedBack.lastError()).isEqualTo("released: worker releasing stopped");
    }

    @Test
    void aBlockingHandlerThatIgnoresItsInterruptionIsHandedBackOnlyOnceItReturnsAndItsLateResultIsDropped() throws Exception {
        Queue<String> calls = new ConcurrentLinkedQueue<>();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        TasklaneWorker worker = TasklaneWorker.builder(recording(calls), "pull-stubborn").workerId("stubborn")
                .blockingHandler("stubborn", task -> {
                    started.countDown();
                    while (finish.getCount() > 0) {
                        try {
                            finish.await();
                        } catch (InterruptedException ignored) {
                            interrupted.set(true); // and carries on, as careless code does
                        }
                    }
                    return "late";
                })
                .build().start();
        long id = client.enqueue("pull-stubborn", NewTask.of("stubborn")).block(PATIENCE).id();
        await().atMost(PATIENCE).until(() -> started.getCount() == 0);

        CompletableFuture<Void> stopping = worker.stop(Duration.ofMillis(500)).toFuture();
        await().atMost(PATIENCE).untilTrue(interrupted);
        // Released now, it could run on another worker alongside the handler that still runs.
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                .until(() -> "running".equals(client.get(id).block(PATIENCE).state()));
        assertThat(stopping).isNotDone();

        finish.countDown();
        stopping.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        Task after = client.get(id).block(PATIENCE);
        assertThat(after.state()).as("handed back once its handler returned").isEqualTo("queued");
        assertThat(after.attempt()).isZero();
        await().during(Duration.ofSeconds(1)).atMost(PATIENCE).until(() -> noOutcomeSent(calls, id));
        assertThat(worker.held()).isZero();
    }

    @Test
    void aBlockingHandlerThatOutlivesTheHandBackIsLeftToItsLeaseAndNeverRunsAlongsideAnother() {
        AtomicBoolean firstRunning = new AtomicBoolean();
        AtomicBoolean overlapped = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        TasklaneWorker first = TasklaneWorker.builder(client, "pull-outlived").workerId("outlived").leaseSeconds(3)
                .blockingHandler("stubborn", task -> {
                    firstRunning.set(true);
                    started.countDown();
                    while (finish.getCount() > 0) {
                        try {
                            finish.await();
                        } catch (InterruptedException ignored) {
                            // carries on
                        }
                    }
                    firstRunning.set(false);
                    return "first";
                })
                .build().start();
        TasklaneWorker second = null;
        try {
            long id = client.enqueue("pull-outlived", NewTask.of("stubborn").withMaxAttempts(3)).block(PATIENCE).id();
            await().atMost(PATIENCE).until(() -> started.getCount() == 0);
            second = TasklaneWorker.builder(client, "pull-outlived").workerId("after").leaseSeconds(3)
                    .handler("stubborn", task -> Mono.fromSupplier(() -> {
                        overlapped.compareAndSet(false, firstRunning.get());
                        return "second";
                    }))
                    .build().start();

            // Ends when the hand-back gives up waiting for the handler, which still runs.
            first.stop(Duration.ofMillis(500)).block(PATIENCE);

            Task kept = client.get(id).block(PATIENCE);
            assertThat(kept.state()).as("not released while its handler runs").isEqualTo("running");
            assertThat(kept.workerId()).isEqualTo("outlived");
            assertThat(first.held()).as("the handler that still runs keeps its slot").isEqualTo(1);
            finish.countDown();

            Task done = awaitTerminal(id);
            assertThat(overlapped).as("the second run began only after the first ended").isFalse();
            assertThat(done.result().asString()).isEqualTo("second");
            assertThat(done.attempt()).as("its lease ran out, which counts the attempt").isEqualTo(2);
            await().atMost(PATIENCE).until(() -> first.held() == 0);
        } finally {
            finish.countDown();
            if (second != null) {
                second.stop(Duration.ofSeconds(5)).block(PATIENCE);
            }
        }
    }

    @Test
    void aStoppedBlockingHandlerKeepsItsSlotUntilItsThreadEnds() {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicInteger runningNow = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-slot").workerId("slot").concurrency(1).leaseSeconds(2)
                .blockingHandler("stubborn", task -> {
                    mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
                    try {
                        started.countDown();
                        while (finish.getCount() > 0) {
                            try {
                                finish.await();
                            } catch (InterruptedException ignored) {
                                interrupted.set(true);
                            }
                        }
                        return "late";
                    } finally {
                        runningNow.decrementAndGet();
                    }
                })
                .handler("quick", task -> Mono.fromSupplier(() -> {
                    mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
                    runningNow.decrementAndGet();
                    return "quick";
                }))
                .build().start();
        try {
            long stubborn = client.enqueue("pull-slot", NewTask.of("stubborn")).block(PATIENCE).id();
            await().atMost(PATIENCE).until(() -> started.getCount() == 0);
            client.cancel(stubborn).block(PATIENCE); // the next heartbeat is answered 409
            await().atMost(PATIENCE).untilTrue(interrupted);

            long quick = client.enqueue("pull-slot", NewTask.of("quick")).block(PATIENCE).id();
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                    .until(() -> worker.held() == 1 && "queued".equals(client.get(quick).block(PATIENCE).state()));

            finish.countDown();
            assertThat(awaitTerminal(quick).state()).isEqualTo("succeeded");
            assertThat(mostAtOnce.get()).as("never more handlers than the concurrency").isEqualTo(1);
        } finally {
            finish.countDown();
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void aStopDoesNotDiscardAnOutcomeTheHandlerProducedBeforeIt() throws Exception {
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/complete", 1)) {
            CountDownLatch returned = new CountDownLatch(1);
            TasklaneWorker worker = TasklaneWorker.builder(proxy.client(), "pull-produced").workerId("produced")
                    .leaseSeconds(3)
                    .handler("once", task -> Mono.fromSupplier(() -> {
                        returned.countDown();
                        return "done";
                    }))
                    .build().start();
            long id = client.enqueue("pull-produced", NewTask.of("once")).block(PATIENCE).id();
            await().atMost(PATIENCE).until(() -> returned.getCount() == 0);

            // The first complete gets no answer; the stop comes while it is sent again.
            worker.stop(Duration.ofMillis(100)).block(PATIENCE);

            Task done = client.get(id).block(PATIENCE);
            assertThat(proxy.answersLost()).isEqualTo(1);
            assertThat(done.state()).as("not handed back: its outcome was already made").isEqualTo("succeeded");
            assertThat(done.result().asString()).isEqualTo("done");
            assertThat(done.attempt()).isEqualTo(1);
        }
    }

    @Test
    void aHeartbeatAnswered409StopsTheHandlerAndItsOutcomeIsNotSent() {
        Queue<String> calls = new ConcurrentLinkedQueue<>();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        TasklaneWorker worker = TasklaneWorker.builder(recording(calls), "pull-cancelled").workerId("cancelled")
                .leaseSeconds(2)
                .blockingHandler("long", task -> {
                    started.countDown();
                    try {
                        Thread.sleep(PATIENCE.toMillis());
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                        throw e; // as a failure, which is not sent either
                    }
                    return "late";
                })
                .build().start();
        try {
            long id = client.enqueue("pull-cancelled", NewTask.of("long")).block(PATIENCE).id();
            await().atMost(PATIENCE).until(() -> started.getCount() == 0);

            client.cancel(id).block(PATIENCE); // an operator; the next heartbeat is answered 409

            await().atMost(Duration.ofSeconds(10)).untilTrue(interrupted);
            assertThat(calls).contains("POST /api/v1/tasks/" + id + "/heartbeat");
            await().during(Duration.ofSeconds(1)).atMost(PATIENCE).until(() -> noOutcomeSent(calls, id));
            assertThat(worker.held()).isZero();
            assertThat(client.get(id).block(PATIENCE).state()).isEqualTo("cancelled");
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void aHandlerIsStoppedAtItsTasksTimeoutLongBeforeAHeartbeatCouldSaySo() {
        Queue<String> calls = new ConcurrentLinkedQueue<>();
        AtomicLong startedAt = new AtomicLong();
        AtomicLong stoppedAt = new AtomicLong();
        // A 30 s lease is renewed every 10 s: only the worker's own clock can stop a 2 s attempt in time.
        TasklaneWorker worker = TasklaneWorker.builder(recording(calls), "pull-timeout").workerId("timeout")
                .leaseSeconds(30)
                .handler("slow", task -> Mono.never()
                        .doOnSubscribe(subscription -> startedAt.set(System.nanoTime()))
                        .doOnCancel(() -> stoppedAt.set(System.nanoTime())))
                .build().start();
        try {
            long id = client.enqueue("pull-timeout", NewTask.of("slow").withTimeoutSeconds(2).withMaxAttempts(1))
                    .block(PATIENCE).id();
            await().atMost(PATIENCE).until(() -> stoppedAt.get() != 0);
            assertThat(Duration.ofNanos(stoppedAt.get() - startedAt.get()))
                    .isBetween(Duration.ofSeconds(1), Duration.ofMillis(2500));

            Task ended = awaitTerminal(id);
            assertThat(ended.state()).isEqualTo("failed");
            assertThat(ended.lastError()).isEqualTo("timed out after 2s");
            assertThat(noOutcomeSent(calls, id)).isTrue();
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    @Test
    void heartbeatsFailingForNearlyALeaseStopTheHandlerBeforeAnotherWorkerCanGetTheTask() throws Exception {
        try (LosingProxy proxy = LosingProxy.start(service.port(), 0)) {
            CountDownLatch firstStarted = new CountDownLatch(1);
            AtomicLong firstStoppedAt = new AtomicLong();
            AtomicLong secondStartedAt = new AtomicLong();
            TasklaneWorker cutOff = TasklaneWorker.builder(proxy.client(), "pull-cut").workerId("cut-off").leaseSeconds(2)
                    .handler("work", task -> Mono.never()
                            .doOnSubscribe(subscription -> firstStarted.countDown())
                            .doOnCancel(() -> firstStoppedAt.set(System.nanoTime())))
                    .build().start();
            TasklaneWorker other = null;
            try {
                long id = client.enqueue("pull-cut", NewTask.of("work")).block(PATIENCE).id();
                await().atMost(PATIENCE).until(() -> firstStarted.getCount() == 0);
                other = TasklaneWorker.builder(client, "pull-cut").workerId("other").leaseSeconds(2)
                        .handler("work", task -> Mono.fromSupplier(() -> {
                            secondStartedAt.set(System.nanoTime());
                            return "second";
                        }))
                        .build().start();

                proxy.cut(); // every heartbeat fails from now on; the lease runs out and is rescued

                Task done = awaitTerminal(id);
                assertThat(done.result().asString()).isEqualTo("second");
                assertThat(done.attempt()).isEqualTo(2);
                assertThat(firstStoppedAt.get()).as("the first handler was stopped").isNotZero();
                assertThat(firstStoppedAt.get() - secondStartedAt.get())
                        .as("the first handler stopped before the second began").isNegative();
            } finally {
                proxy.mend();
                cutOff.stop(Duration.ofSeconds(5)).block(PATIENCE);
                if (other != null) {
                    other.stop(Duration.ofSeconds(5)).block(PATIENCE);
                }
            }
        }
    }

    @Test
    void theBuilderRefusesWaitAndLeaseSecondsTheServiceWouldRefuse() {
        TasklaneWorker.Builder builder = TasklaneWorker.builder(client, "pull-settings").handler("t", task -> Mono.empty());
        assertThatIllegalArgumentException().isThrownBy(() -> builder.waitSeconds(31).build()).withMessageContaining("waitSeconds");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.waitSeconds(-1).build()).withMessageContaining("waitSeconds");
        builder.waitSeconds(30);
        assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseSeconds(0).build()).withMessageContaining("leaseSeconds");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseSeconds(43_201).build())
                .withMessageContaining("leaseSeconds");
        assertThat(builder.leaseSeconds(43_200).build()).isNotNull();
        assertThat(builder.leaseSeconds(1).waitSeconds(0).build()).isNotNull();
    }

    @Test
    void withAnObservationRegistryEachTaskIsHandledInAnObservationThatContinuesItsTrace() {
        String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        TestObservationRegistry observations = TestObservationRegistry.create();
        AtomicReference<Object> seenByHandler = new AtomicReference<>();
        TasklaneWorker worker = TasklaneWorker.builder(client, "pull-traced").workerId("traced")
                .observationRegistry(observations)
                .handler("traced", task -> Mono.deferContextual(context -> {
                    seenByHandler.set(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null));
                    return Mono.just("ok");
                }))
                .build().start();
        try {
            long id = WebClient.create(service.baseUrl()).post().uri("/api/v1/queues/pull-traced/tasks")
                    .header("Authorization", "Bearer " + TasklaneService.TOKEN).header("traceparent", traceparent)
                    .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"type\": \"traced\"}")
                    .retrieve().bodyToMono(Task.class).block(PATIENCE).id();
            assertThat(awaitTerminal(id).state()).isEqualTo("succeeded");

            TestObservationRegistryAssert.assertThat(observations)
                    .hasObservationWithNameEqualTo("tasklane.task.process").that()
                    .hasContextualNameEqualTo("process traced")
                    .hasHighCardinalityKeyValue("tasklane.task.id", Long.toString(id))
                    .hasBeenStarted().hasBeenStopped()
                    .satisfies(context -> {
                        @SuppressWarnings("unchecked")
                        ReceiverContext<Task> received = (ReceiverContext<Task>) context;
                        assertThat(received.getGetter().get(received.getCarrier(), "traceparent")).isEqualTo(traceparent);
                    });
            assertThat(seenByHandler.get()).as("the handler runs inside the observation").isNotNull();
        } finally {
            worker.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    /** Starts the worker, enqueues {@code task} on {@code queue}, waits for its end, and stops the worker. */
    private static Task runToTheEnd(TasklaneWorker.Builder worker, String queue, NewTask task, Duration patience) {
        TasklaneWorker started = worker.build().start();
        try {
            long id = client.enqueue(queue, task).block(PATIENCE).id();
            return await().atMost(patience).pollInterval(Duration.ofMillis(100))
                    .until(() -> client.get(id).block(PATIENCE), Task::isTerminal);
        } finally {
            started.stop(Duration.ofSeconds(5)).block(PATIENCE);
        }
    }

    /** A client that notes each call it sends ({@code POST /api/v1/tasks/7/complete}). */
    private static TasklaneClient recording(Queue<String> calls) {
        return TasklaneClient.builder(service.baseUrl()).token(TasklaneService.TOKEN)
                .webClient(WebClient.builder().filter((request, next) -> {
                    calls.add(request.method().name() + " " + request.url().getPath());
                    return next.exchange(request);
                }))
                .build();
    }

    private static boolean noOutcomeSent(Queue<String> calls, long id) {
        return calls.stream().noneMatch(call -> call.startsWith("POST /api/v1/tasks/" + id + "/")
                && (call.endsWith("/complete") || call.endsWith("/fail")));
    }

    private static Task awaitTerminal(long id) {
        return await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> client.get(id).block(PATIENCE), Task::isTerminal);
    }
}
