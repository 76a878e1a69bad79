package dev.tasklane.maintenance;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.QueueStore;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.queue.TaskStore.Pruning;
import dev.tasklane.schedule.ScheduleStore;
import dev.tasklane.testsupport.EventRows;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

final class RetentionIntegrationTests extends IntegrationTest {

    @Autowired
    private TaskStore store;
    @Autowired
    private TasklaneProperties properties;
    @Autowired
    private QueueStore queues;
    @Autowired
    private ScheduleStore schedules;

    @Test
    void retentionDeletesOldTerminalTasksWithTheirEventsAndLeavesEverythingElse() {
        String queue = TaskFixtures.uniqueQueue("retention");
        Tasks tasks = new Tasks(api());
        Map<String, Long> ids = new java.util.LinkedHashMap<>();
        for (String name : List.of("oldSucceeded", "oldFailed", "oldCancelled", "recentSucceeded", "queued",
                "running", "queuedOnceFinished")) {
            ids.put(name, tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue());
        }
        finish(ids.get("oldSucceeded"), "succeeded", "8 days");
        finish(ids.get("oldFailed"), "failed", "8 days");
        finish(ids.get("oldCancelled"), "cancelled", "30 days");
        finish(ids.get("recentSucceeded"), "succeeded", "6 days");
        Sql.update("UPDATE task SET state = 'running', started_at = now() - interval '9 days', worker_id = 'w',"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = ?", ids.get("running"));
        TaskRows.follow(ids.get("running"));
        // A retried task keeps an old finished_at no longer: only terminal rows are pruned.
        Sql.update("UPDATE task SET finished_at = now() - interval '9 days' WHERE id = ?", ids.get("queuedOnceFinished"));
        long newestOldEvent = Long.parseLong(Sql.column("SELECT max(id) FROM task_event WHERE task_id IN (?, ?, ?)",
                ids.get("oldSucceeded"), ids.get("oldFailed"), ids.get("oldCancelled")).get(0));

        for (long id : ids.values()) {
            EventRows.age(id, 10);
        }

        long pruned = new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30))
                + pruneOf(queue);

        assertThat(pruned).isGreaterThanOrEqualTo(3);
        assertThat(Sql.column("SELECT id FROM task WHERE queue = ? ORDER BY id", queue)).containsExactly(
                ids.get("recentSucceeded").toString(), ids.get("queued").toString(), ids.get("running").toString(),
                ids.get("queuedOnceFinished").toString());
        assertThat(Sql.column("SELECT DISTINCT task_id FROM task_event WHERE queue = ? ORDER BY 1", queue))
                .containsExactly(ids.get("recentSucceeded").toString(), ids.get("queued").toString(),
                        ids.get("running").toString(), ids.get("queuedOnceFinished").toString());
        assertThat(Long.parseLong(Sql.column("SELECT pruned_through FROM event_retention").get(0)))
                .isGreaterThanOrEqualTo(newestOldEvent);
        api().get().uri("/api/v1/tasks/{id}", ids.get("oldSucceeded")).exchange().expectStatus().isNotFound()
                .expectBody();
    }

    @Test
    void retentionWorksOffABacklogLargerThanOneBatch() {
        String queue = TaskFixtures.uniqueQueue("retention-backlog");
        int count = Retention.BATCH * 2 + 7;
        Sql.update("""
                INSERT INTO task (queue, type, state, finished_at)
                SELECT ?, 'noop', 'succeeded', now() - interval '10 days' FROM generate_series(1, ?)""", queue, count);
        EventRows.appendToEvery(queue, 100, "succeeded");
        Sql.update("UPDATE task_event_batch SET at = now() - interval '10 days' WHERE queue = ?", queue);

        long pruned = pruneOf(queue);

        assertThat(pruned).isEqualTo(count);
        assertThat(Sql.column("SELECT count(*) FROM task WHERE queue = ?", queue)).containsExactly("0");
        assertThat(Sql.column("SELECT count(*) FROM task_event_batch WHERE queue = ?", queue)).containsExactly("0");
    }

    @Test
    void anEventBatchStaysWhileAnyOfItsTasksWaitsRunsOrFinishedRecentlyAndGoesWithTheLastOfThem() {
        String queue = TaskFixtures.uniqueQueue("retention-batch");
        String body = "{\"tasks\": [{\"type\": \"noop\"}, {\"type\": \"noop\"}, {\"type\": \"noop\"}]}";
        List<Long> ids = new Tasks(api()).enqueueBatch(queue, body);
        long batch = Long.parseLong(Sql.column("SELECT event_batch FROM task WHERE id = ?", ids.get(0)).get(0));
        assertThat(Sql.column("SELECT DISTINCT event_batch FROM task WHERE queue = ?", queue)).containsExactly(Long.toString(batch));
        Sql.update("UPDATE task_event_batch SET at = now() - interval '10 days' WHERE first_id = ?", batch);
        Instant before = Instant.now().minus(properties.retention());
        finish(ids.get(0), "succeeded", "10 days");
        finish(ids.get(1), "succeeded", "1 day"); // within retention: keeps the batch
        // ids.get(2) still waits: keeps the batch

        Pruning first = store.pruneOld(before, batch - 1, 1).block(Duration.ofSeconds(10));
        assertThat(first.pruned()).isZero();
        assertThat(first.tasks()).isEqualTo(1); // the one finished long enough ago goes; its batch stays for the others
        finish(ids.get(1), "succeeded", "10 days");
        Pruning second = store.pruneOld(before, batch - 1, 1).block(Duration.ofSeconds(10));
        assertThat(second.pruned()).isZero();
        assertThat(second.tasks()).isEqualTo(1);
        Sql.update("UPDATE task SET state = 'cancelled', finished_at = now() - interval '9 days' WHERE id = ?",
                ids.get(2)); // the last of them finishes long ago too
        TaskRows.follow(ids.get(2));

        Pruning round = store.pruneOld(before, batch - 1, 1).block(Duration.ofSeconds(10));

        assertThat(round.tasks()).isEqualTo(1);
        assertThat(round.pruned()).isEqualTo(1);
        assertThat(round.last()).isEqualTo(batch);
        assertThat(Sql.column("SELECT count(*) FROM task_event_batch WHERE first_id = ?", batch)).containsExactly("0");
        assertThat(Long.parseLong(Sql.column("SELECT pruned_through FROM event_retention").get(0)))
                .isGreaterThanOrEqualTo(batch + 2);
    }

    @Test
    void aBatchOfATaskThatARetryHoldsLockedStaysUntilTheRetryHasEnded() throws Exception {
        String queue = TaskFixtures.uniqueQueue("retention-retried");
        long id = new Tasks(api()).enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        finish(id, "failed", "10 days");
        EventRows.age(id, 10);
        long batch = Long.parseLong(Sql.column("SELECT event_batch FROM task WHERE id = ?", id).get(0));
        Instant before = Instant.now().minus(properties.retention());
        try (Connection retry = TestDatabase.get().connect()) {
            retry.setAutoCommit(false);
            try (Statement lock = retry.createStatement()) {
                lock.execute("SELECT id FROM task WHERE id = " + id + " FOR UPDATE"); // as RETRY_MANY locks it
            }
            Pruning held = store.pruneOld(before, batch - 1, 1).block(Duration.ofSeconds(10));
            assertThat(held.tasks()).isZero();
            assertThat(held.pruned()).isZero();
            retry.rollback();
        }

        Pruning round = store.pruneOld(before, batch - 1, 1).block(Duration.ofSeconds(10));
        assertThat(round.tasks()).isEqualTo(1);
        assertThat(round.pruned()).isEqualTo(1);
    }

    @Test
    void aRoundOfEventRetentionDeletesOnlyBatchesWrittenBeforeTheCutoffAndCountsTheOldOnesItSaw() {
        String queue = TaskFixtures.uniqueQueue("retention-young");
        EventRows.appendOrphans(queue, 3, 1, "succeeded", "'{}'::jsonb");
        List<String> batches = Sql.column("SELECT first_id FROM task_event_batch WHERE queue = ? ORDER BY 1", queue);
        Sql.update("UPDATE task_event_batch SET at = now() - interval '10 days' WHERE first_id IN (?, ?)",
                Long.parseLong(batches.get(0)), Long.parseLong(batches.get(2)));
        Instant before = Instant.now().minus(properties.retention());

        Pruning round = store.pruneOld(before, Long.parseLong(batches.get(0)) - 1, 3).block(Duration.ofSeconds(10));

        assertThat(round.examined()).isEqualTo(3);
        assertThat(round.old()).isEqualTo(2);
        assertThat(round.goesOn()).isFalse();
        assertThat(round.pruned()).isEqualTo(2);
        assertThat(Sql.column("SELECT first_id FROM task_event_batch WHERE queue = ?", queue)).containsExactly(batches.get(1));
    }

    @Test
    void theEventsOfADeletedTaskStayUntilRetentionPrunesThemAndSaysSo() {
        String queue = TaskFixtures.uniqueQueue("retention-deleted");
        Tasks tasks = new Tasks(api());
        long recent = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        long old = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        for (long id : List.of(recent, old)) {
            tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
            api().delete().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNoContent().expectBody();
        }
        Sql.update("UPDATE task_tombstone SET finished_at = now() - interval '8 days' WHERE task_id = ?", old);
        EventRows.age(old, 8);
        long oldestEvent = Long.parseLong(Sql.column("SELECT max(id) FROM task_event WHERE task_id = ?", old).get(0));

        new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30));
        pruneOf(queue);

        assertThat(Sql.column("SELECT DISTINCT task_id::text FROM task_event WHERE queue = ?", queue))
                .containsExactly(Long.toString(recent));
        assertThat(Sql.column("SELECT task_id::text FROM task_tombstone WHERE task_id IN (?, ?)", recent, old))
                .containsExactly(Long.toString(recent));
        assertThat(Long.parseLong(Sql.column("SELECT pruned_through FROM event_retention").get(0)))
                .isGreaterThanOrEqualTo(oldestEvent);
    }

    @Test
    void rateBookkeepingGoesOnceNoWindowOfItsQueueCanSeeIt() {
        String rated = TaskFixtures.uniqueQueue("retention-rated");
        String unrated = TaskFixtures.uniqueQueue("retention-unrated");
        api().patch().uri("/api/v1/queues/{q}", rated).contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"rate\": {\"count\": 5, \"periodSeconds\": 60}}").exchange().expectStatus().isOk()
                .expectBody().returnResult();
        Sql.update("INSERT INTO queue_claim_start (queue, concurrency_key, started_at, tasks) VALUES"
                + " (?, '', now() - interval '2 minutes', 1), (?, '', now() - interval '10 seconds', 1),"
                + " (?, '', now() - interval '1 second', 1)", rated, rated, unrated);

        new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30));

        // the row still inside the rated queue's minute stays; the older one, and the unrated queue's, go
        assertThat(Sql.column("SELECT queue || ' ' || (started_at > now() - interval '1 minute') FROM queue_claim_start"
                + " WHERE queue IN (?, ?)", rated, unrated)).containsExactly(rated + " true");
    }

    @Test
    void settledFireTimesGoWithRetentionAndTheFireTimeStillNeverRunsAgain() {
        String schedule = TaskFixtures.uniqueQueue("retention-schedule");
        Sql.update("INSERT INTO schedule (name, cron, timezone, queue, task, overlap, catch_up, settled_until, next_fire_at)"
                + " VALUES (?, '@daily', 'UTC', 'q', '{\"type\": \"t\", \"priority\": 0, \"maxAttempts\": 5,"
                + " \"timeoutSeconds\": 60}', 'allow', 'none', now(), now() + interval '1 day')", schedule);
        Sql.update("INSERT INTO schedule_fire (schedule, fire_at, outcome) VALUES (?, now() - interval '30 days', 'enqueued'),"
                + " (?, now() - interval '1 day', 'enqueued')", schedule, schedule);

        new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30));

        assertThat(Sql.column("SELECT (fire_at > now() - interval '2 days')::text FROM schedule_fire WHERE schedule = ?",
                schedule)).containsExactly("true");
        Sql.update("DELETE FROM schedule WHERE name = ?", schedule);
    }

    /**
     * Retention's rounds over the queue's batches, as the service runs them; answers how many tasks
     * they pruned. The shared test database holds younger batches of other tests before them,
     * where the service's own rounds, which start at the oldest batch, stop.
     */
    private long pruneOf(String queue) {
        long first = Long.parseLong(Sql.column("SELECT coalesce(min(first_id), 0) FROM task_event_batch WHERE queue = ?",
                queue).get(0));
        Instant before = Instant.now().minus(properties.retention());
        return store.pruneOld(before, first - 1, Retention.BATCH)
                .expand(round -> round.goesOn() ? store.pruneOld(before, round.last(), Retention.BATCH) : Mono.empty())
                .reduce(0L, (sum, round) -> sum + round.tasks())
                .block(Duration.ofSeconds(60));
    }

    private static void finish(long id, String state, String ago) {
        Sql.update("UPDATE task SET state = ?, finished_at = now() - CAST(? AS interval) WHERE id = ?", state, ago, id);
        TaskRows.follow(id);
    }
}
