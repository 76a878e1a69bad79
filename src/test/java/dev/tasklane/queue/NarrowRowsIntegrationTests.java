package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TaskRows;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ready and running rows (V023) follow their tasks on the paths where a statement cannot see
 * what it waited for: a cancel that waited for a claim, and rows that something left behind.
 */
final class NarrowRowsIntegrationTests extends IntegrationTest {

    @Autowired
    private TaskStore store;

    @Test
    void aCancelThatWaitedForAClaimCancelsTheRunningTaskAndLeavesNoRunningRowBehind() throws Exception {
        String queue = TaskFixtures.uniqueQueue("cancel-race");
        Tasks tasks = new Tasks(api());
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        try (Connection claimer = TestDatabase.get().connect()) {
            claimer.setAutoCommit(false);
            try (Statement claim = claimer.createStatement()) {
                claim.execute("SELECT * FROM tasklane_claim_any_type('" + queue + "', 1, 'w-race', gen_random_uuid(),"
                        + " 60000, false, NULL, NULL)");
            }
            CompletableFuture<JsonNode> cancel = CompletableFuture.supplyAsync(
                    () -> tasks.post("/api/v1/tasks/" + id + "/cancel", 200));
            await().atMost(Duration.ofSeconds(10)).until(() -> !Sql.column("SELECT pid FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    + " AND query LIKE '%state IN (''queued'', ''running'')%FOR UPDATE%'").isEmpty());
            claimer.commit(); // the task is running now, with a running row younger than the cancel's first statement

            assertThat(cancel.get(10, TimeUnit.SECONDS).get("state").stringValue()).isEqualTo("cancelled");
        }
        assertThat(Sql.column("SELECT count(*) FROM task_running WHERE id = ?", id)).containsExactly("0");
        assertThat(Sql.column("SELECT count(*) FROM task_ready WHERE id = ?", id)).containsExactly("0");
        assertThat(Sql.column("SELECT name FROM task_event WHERE task_id = ? ORDER BY id", id))
                .containsExactly("queued", "running", "cancelled");
    }

    @Test
    void aLateOutcomeWithoutALeaseLeavesTheSameWorkersNewerAttemptAloneAndItsRunningRowInPlace() throws Exception {
        String queue = TaskFixtures.uniqueQueue("late-outcome");
        Tasks tasks = new Tasks(api());
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        claimAs(queue, "w-late");
        Sql.update("UPDATE task SET lease_expires_at = now() - interval '1 second' WHERE id = ?", id);
        store.rescueExpired(500).collectList().block(Duration.ofSeconds(10)); // queued again, attempt 1 counted
        try (Connection claimer = TestDatabase.get().connect()) {
            claimer.setAutoCommit(false);
            try (Statement claim = claimer.createStatement()) {
                claim.execute("SELECT * FROM tasklane_claim_any_type('" + queue + "', 1, 'w-late', gen_random_uuid(),"
                        + " 60000, false, NULL, NULL)");
            }
            // The first attempt's outcome, late and without its lease, begins before the second attempt
            // commits: whether its plan waits for the claim's lock or not, it sees no running row of the
            // second attempt and leaves it alone.
            CompletableFuture<Integer> late = CompletableFuture.supplyAsync(() -> api().post()
                    .uri("/api/v1/tasks/{id}/complete", id).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w-late\"}").exchange().returnResult(String.class).getStatus().value());
            await().atMost(Duration.ofSeconds(10)).until(() -> late.isDone() || !Sql.column("SELECT pid FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    + " AND query LIKE '%JOIN task locked%'").isEmpty());
            claimer.commit();

            assertThat(late.get(10, TimeUnit.SECONDS)).isEqualTo(409);
        }
        JsonNode task = tasks.get(id);
        assertThat(task.get("state").stringValue()).isEqualTo("running");
        assertThat(task.get("attempt").intValue()).isEqualTo(2);
        assertThat(Sql.column("SELECT count(*) FROM task_running WHERE id = ?", id)).containsExactly("1");
    }

    @Test
    void theSweepForgetsRunningRowsOfTasksThatNoLongerRunAndKeepsTheOthers() {
        String queue = TaskFixtures.uniqueQueue("stray-running");
        Tasks tasks = new Tasks(api());
        long running = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        long queued = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        Sql.update("UPDATE task SET state = 'running', attempt = 1, worker_id = 'w', started_at = now(),"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = ?", running);
        TaskRows.follow(running);
        Sql.update("INSERT INTO task_running (id, queue, concurrency_key) VALUES (?, ?, ''), (-7, ?, '')",
                queued, queue, queue);

        assertThat(store.forgetStrayRows().block(Duration.ofSeconds(10))).isGreaterThanOrEqualTo(2L);

        assertThat(Sql.column("SELECT id FROM task_running WHERE queue = ?", queue)).containsExactly(Long.toString(running));
    }

    @Test
    void aReadyRowLeftBehindNeitherStartsItsTaskNorStandsInTheWayOfItsRetry() {
        String queue = TaskFixtures.uniqueQueue("stray-ready");
        Tasks tasks = new Tasks(api());
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        String strayRow = "INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at)"
                + " VALUES (?, ?, 'noop', 0, now() - interval '1 second', '', now())";
        Sql.update(strayRow, id, queue);

        JsonNode claimed = claim(queue);

        assertThat(claimed.get("tasks")).isEmpty();
        assertThat(tasks.get(id).get("state").stringValue()).isEqualTo("cancelled");
        assertThat(Sql.column("SELECT count(*) FROM task_ready WHERE id = ?", id)).containsExactly("0");

        Sql.update(strayRow, id, queue);
        assertThat(tasks.post("/api/v1/tasks/" + id + "/retry", 200).get("state").stringValue()).isEqualTo("queued");
        assertThat(claim(queue).get("tasks")).extracting(task -> task.get("id").longValue()).containsExactly(id);
        assertThat(Sql.column("SELECT count(*) FROM task_ready WHERE id = ?", id)).containsExactly("0");
        assertThat(Sql.column("SELECT count(*) FROM task_running WHERE id = ?", id)).containsExactly("1");
    }

    @Test
    void aClaimClearsReadyRowsWhoseTaskIsGoneAndTheNextClaimGetsOn() {
        String queue = TaskFixtures.uniqueQueue("stray-gone");
        Tasks tasks = new Tasks(api());
        Sql.update("INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at)"
                + " SELECT -g, ?, 'noop', 0, now() - interval '1 hour', '', now() FROM generate_series(1, 5) g", queue);
        long waiting = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();

        List<Long> claimed = new ArrayList<>();
        for (int round = 0; round < 3 && claimed.isEmpty(); round++) {
            claim(queue).get("tasks").forEach(task -> claimed.add(task.get("id").longValue()));
        }

        assertThat(claimed).containsExactly(waiting);
        assertThat(Sql.column("SELECT id FROM task_ready WHERE queue = ?", queue)).isEmpty();
    }

    @Test
    void deletingATaskTakesAReadyRowLeftBehindWithIt() {
        String queue = TaskFixtures.uniqueQueue("stray-deleted");
        Tasks tasks = new Tasks(api());
        long id = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        tasks.post("/api/v1/tasks/" + id + "/cancel", 200);
        Sql.update("INSERT INTO task_ready (id, queue, type, priority, run_at, concurrency_key, created_at)"
                + " VALUES (?, ?, 'noop', 0, now() + interval '1 day', '', now())", id, queue);

        api().delete().uri("/api/v1/tasks/" + id).exchange().expectStatus().isNoContent().expectBody();

        assertThat(Sql.column("SELECT id FROM task_ready WHERE id = ?", id)).isEmpty();
    }

    @Test
    void aClaimSkipsATaskWhoseRowSomeoneHoldsWithoutWaitingAndLetsThemTakeItsReadyRow() throws Exception {
        String queue = TaskFixtures.uniqueQueue("held-row");
        Tasks tasks = new Tasks(api());
        long held = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        long free = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
        try (Connection holder = TestDatabase.get().connect()) {
            holder.setAutoCommit(false);
            try (Statement sql = holder.createStatement()) {
                sql.execute("SET LOCAL lock_timeout = '5s'");
                sql.execute("SELECT id FROM task WHERE id = " + held + " FOR UPDATE"); // as a cancel's first statement does

                assertThat(claim(queue).get("tasks")).extracting(task -> task.get("id").longValue()).containsExactly(free);
                // as the cancel's second statement does: the claim has let go of the ready row
                assertThat(sql.executeUpdate("DELETE FROM task_ready WHERE id = " + held)).isEqualTo(1);
            }
            holder.rollback();
        }
        assertThat(claim(queue).get("tasks")).extracting(task -> task.get("id").longValue()).containsExactly(held);
    }

    private JsonNode claim(String queue) {
        return claimAs(queue, "w");
    }

    private JsonNode claimAs(String queue, String workerId) {
        return api().post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"" + workerId + "\", \"max\": 5}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }
}
