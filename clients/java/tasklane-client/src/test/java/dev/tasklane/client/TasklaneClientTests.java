package dev.tasklane.client;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import dev.tasklane.client.testing.LosingProxy;
import dev.tasklane.client.testing.TasklaneService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The typed calls against the real service, each as the contract says. */
final class TasklaneClientTests {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static TasklaneService service;
    private static TasklaneClient client;

    @BeforeAll
    static void start() throws Exception {
        service = TasklaneService.start(Map.of());
        client = TasklaneClient.builder(service.baseUrl()).token(TasklaneService.TOKEN).build();
    }

    @AfterAll
    static void stop() throws Exception {
        service.close();
    }

    @Test
    void enqueueGetAndListWithPaging() {
        Task first = client.enqueue("listing", NewTask.of("report", Map.of("n", 1)).withPriority(5)).block(PATIENCE);
        assertThat(first.state()).isEqualTo("queued");
        assertThat(first.priority()).isEqualTo(5);
        assertThat(first.payload().get("n").intValue()).isEqualTo(1);
        assertThat(first.idempotencyKey()).as("made up by the client").startsWith("client-");
        List<Task> batch = client.enqueueBatch("listing", List.of(NewTask.of("report", Map.of("n", 2)),
                NewTask.of("report", Map.of("n", 3)), NewTask.of("report").withDelaySeconds(3600))).block(PATIENCE);
        assertThat(batch).hasSize(3);

        assertThat(client.get(first.id()).block(PATIENCE).type()).isEqualTo("report");
        TaskPage page = client.list(TaskQuery.queue("listing").withLimit(2)).block(PATIENCE);
        assertThat(page.tasks()).hasSize(2);
        assertThat(page.next()).isNotNull();
        List<Long> all = client.listAll(TaskQuery.queue("listing").withLimit(2)).map(Task::id).collectList().block(PATIENCE);
        assertThat(all).containsExactly(batch.get(2).id(), batch.get(1).id(), batch.get(0).id(), first.id());
    }

    @Test
    void payloadNumbersComeBackExactlyAsSent() {
        BigDecimal amount = new BigDecimal("12345678901234567.25");
        Task task = client.enqueue("exact", NewTask.of("report", Map.of("amount", amount, "rate", new BigDecimal("0.10"))))
                .block(PATIENCE);
        for (Task read : List.of(task, client.get(task.id()).block(PATIENCE))) {
            assertThat(read.payload().get("amount").decimalValue()).isEqualTo(amount);
            assertThat(read.payload().get("rate").decimalValue()).isEqualTo(new BigDecimal("0.10"));
        }
    }

    @Test
    void cancelRetryAndDeleteFollowTheTaskStates() {
        Task task = client.enqueue("changes", NewTask.of("remote")).block(PATIENCE);
        assertThat(client.cancel(task.id()).block(PATIENCE).state()).isEqualTo("cancelled");
        assertThatThrownBy(() -> client.cancel(task.id()).block(PATIENCE))
                .isInstanceOfSatisfying(TasklaneException.class, e -> {
                    assertThat(e.status()).isEqualTo(409);
                    assertThat(e.problem().get("state").asString()).isEqualTo("cancelled");
                });
        assertThat(client.retry(task.id()).block(PATIENCE).state()).isEqualTo("queued");
        client.cancel(task.id()).block(PATIENCE);
        client.delete(task.id()).block(PATIENCE);
        assertThatThrownBy(() -> client.get(task.id()).block(PATIENCE))
                .isInstanceOfSatisfying(TasklaneException.class, e -> assertThat(e.status()).isEqualTo(404));
    }

    @Test
    void queuesPauseResumeAndFlowControl() {
        client.enqueue("paused-queue", NewTask.of("remote")).block(PATIENCE);
        assertThat(client.pause("paused-queue").block(PATIENCE).paused()).isTrue();
        assertThat(client.claim("paused-queue", TasklaneClient.Claim.by("w")).block(PATIENCE)).isEmpty();
        assertThat(client.resume("paused-queue").block(PATIENCE).paused()).isFalse();
        QueueInfo limited = client.configureQueue("paused-queue", Map.of("maxRunning", 3)).block(PATIENCE);
        assertThat(limited.limits().get("maxRunning").intValue()).isEqualTo(3);
        assertThat(client.queues().block(PATIENCE)).extracting(QueueInfo::name).contains("paused-queue");
        assertThat(client.workers().block(PATIENCE).get("workers")).isNotEmpty();
        assertThat(client.scopes().block(PATIENCE)).containsExactlyInAnyOrder("read", "enqueue", "work", "admin");
    }

    @Test
    void schedulesAndBulkActions() {
        assertThat(client.putSchedule("nightly", Map.of("cron", "0 3 * * *", "timezone", "Europe/Berlin",
                "queue", "scheduled", "task", Map.of("type", "report"))).block(PATIENCE).get("name").asString())
                .isEqualTo("nightly");
        Task made = client.triggerSchedule("nightly").block(PATIENCE);
        assertThat(made.schedule()).isEqualTo("nightly");
        assertThat(client.schedules().block(PATIENCE).get("schedules")).hasSize(1);
        assertThat(client.bulk("cancel", Map.of("queue", "scheduled")).block(PATIENCE).count()).isEqualTo(1);
        client.deleteSchedule("nightly").block(PATIENCE);
        assertThatThrownBy(() -> client.schedule("nightly").block(PATIENCE))
                .isInstanceOfSatisfying(TasklaneException.class, e -> assertThat(e.status()).isEqualTo(404));
    }

    @Test
    void badInputArrivesAsTheProblemTheServiceSent() {
        assertThatThrownBy(() -> client.enqueue("bad", NewTask.of("no spaces allowed")).block(PATIENCE))
                .isInstanceOfSatisfying(TasklaneException.class, e -> {
                    assertThat(e.status()).isEqualTo(422);
                    assertThat(e.problem().get("errors").get(0).get("field").asString()).isEqualTo("type");
                });
        TasklaneClient wrongToken = TasklaneClient.builder(service.baseUrl()).token("wrong").build();
        assertThatThrownBy(() -> wrongToken.get(1).block(PATIENCE))
                .isInstanceOfSatisfying(TasklaneException.class, e -> assertThat(e.status()).isEqualTo(401));
    }

    @Test
    void anEnqueueWhoseAnswerIsLostIsRetriedWithTheSameKeyAndMakesOneTask() throws Exception {
        Task task;
        try (LosingProxy proxy = LosingProxy.start(service.port(), 2)) {
            task = proxy.client().enqueue("lossy", NewTask.of("remote")).block(PATIENCE);
            assertThat(proxy.answersLost()).as("the first two answers never arrived").isEqualTo(2);
        }
        assertThat(client.list(TaskQuery.queue("lossy")).block(PATIENCE).tasks()).extracting(Task::id)
                .containsExactly(task.id());
    }

    @Test
    void aBatchWhoseAnswerIsLostIsRetriedWithTheSameKeysAndMakesEachTaskOnce() throws Exception {
        List<Task> batch;
        try (LosingProxy proxy = LosingProxy.start(service.port(), 1)) {
            batch = proxy.client().enqueueBatch("lossy-batch", List.of(NewTask.of("remote"), NewTask.of("remote")))
                    .block(PATIENCE);
            assertThat(proxy.answersLost()).isEqualTo(1);
        }
        Set<Long> made = client.list(TaskQuery.queue("lossy-batch")).block(PATIENCE).tasks().stream()
                .map(Task::id).collect(Collectors.toSet());
        assertThat(made).containsExactlyInAnyOrderElementsOf(batch.stream().map(Task::id).toList());
    }

    @Test
    void anEnqueueThatGetsNoAnswerIsSentAgainAfterTheResponseTimeoutAndMakesOneTask() throws Exception {
        Task task;
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/queues/silent/tasks", 1)) {
            task = proxy.clientBuilder().responseTimeout(Duration.ofMillis(500)).build()
                    .enqueue("silent", NewTask.of("remote")).block(PATIENCE);
            assertThat(proxy.answersLost()).as("the first try met a service that stopped answering").isEqualTo(1);
        }
        assertThat(client.list(TaskQuery.queue("silent")).block(PATIENCE).tasks()).extracting(Task::id)
                .containsExactly(task.id());
    }

    @Test
    void aCallThatIsNotRetriedFailsWithATimeoutInsteadOfHangingOnASilentService() throws Exception {
        Task task = client.enqueue("silent-cancel", NewTask.of("remote").withDelaySeconds(3600)).block(PATIENCE);
        try (LosingProxy proxy = LosingProxy.silentAfter(service.port(), "/cancel", 1)) {
            TasklaneClient impatient = proxy.clientBuilder().responseTimeout(Duration.ofMillis(500)).build();
            // A hang would instead end in block()'s own timeout, an IllegalStateException.
            String outcome = impatient.cancel(task.id()).map(Task::state)
                    .onErrorResume(TimeoutException.class, timedOut -> Mono.just("timed out"))
                    .block(PATIENCE);
            assertThat(outcome).isEqualTo("timed out");
            assertThat(proxy.answersLost()).isEqualTo(1);
        }
        assertThat(client.get(task.id()).block(PATIENCE).state()).as("the cancel never arrived").isEqualTo("queued");
    }

    @Test
    void aLongPollClaimMayWaitItsWholeWaitBeyondTheResponseTimeout() {
        TasklaneClient impatient = TasklaneClient.builder(service.baseUrl()).token(TasklaneService.TOKEN)
                .responseTimeout(Duration.ofMillis(500)).build();
        long start = System.nanoTime();
        List<Task> claimed = impatient.claim("long-poll-empty", TasklaneClient.Claim.by("patient").withWaitSeconds(2))
                .block(PATIENCE);
        assertThat(claimed).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
    }

    @Test
    void aTaskStreamDeliversEveryEventAndEndsWhenTheTaskIsDone() {
        Task task = client.enqueue("default", NewTask.of("sleep", Map.of("durationMs", 200, "steps", 2))).block(PATIENCE);
        List<TaskEvent> events = client.taskEvents(task.id()).collectList().block(PATIENCE);
        assertThat(events).extracting(TaskEvent::name).containsExactly("queued", "running", "progress", "progress", "succeeded");
        assertThat(events).allSatisfy(event -> assertThat(event.taskId()).isEqualTo(task.id()));
    }
}
