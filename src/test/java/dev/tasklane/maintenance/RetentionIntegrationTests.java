package dev.tasklane.maintenance;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.QueueStore;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.schedule.ScheduleStore;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

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
        // A retried task keeps an old finished_at no longer: only terminal rows are pruned.
        Sql.update("UPDATE task SET finished_at = now() - interval '9 days' WHERE id = ?", ids.get("queuedOnceFinished"));
        long newestOldEvent = Long.parseLong(Sql.column("SELECT max(id) FROM task_event WHERE task_id IN (?, ?, ?)",
                ids.get("oldSucceeded"), ids.get("oldFailed"), ids.get("oldCancelled")).get(0));

        long pruned = new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30));

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
                WITH t AS (
                    INSERT INTO task (queue, type, state, finished_at)
                    SELECT ?, 'noop', 'succeeded', now() - interval '10 days' FROM generate_series(1, ?)
                    RETURNING *)
                INSERT INTO task_event (task_id, queue, task_type, name, state, attempt)
                SELECT id, queue, type, 'succeeded', state, 1 FROM t""", queue, count);

        long pruned = new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(60));

        assertThat(pruned).isGreaterThanOrEqualTo(count);
        assertThat(Sql.column("SELECT count(*) FROM task WHERE queue = ?", queue)).containsExactly("0");
        assertThat(Sql.column("SELECT count(*) FROM task_event WHERE queue = ?", queue)).containsExactly("0");
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
        long oldestEvent = Long.parseLong(Sql.column("SELECT max(id) FROM task_event WHERE task_id = ?", old).get(0));

        new Retention(store, queues, schedules, properties).pruneAll().block(Duration.ofSeconds(30));

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

    private static void finish(long id, String state, String ago) {
        Sql.update("UPDATE task SET state = ?, finished_at = now() - CAST(? AS interval) WHERE id = ?", state, ago, id);
    }
}
