package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.tasklane.testsupport.EventRows;
import dev.tasklane.testsupport.Migrations;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestDatabase;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A database written by the release before V023 (one wide task table whose indexes held every
 * state) upgrades with nothing lost: every waiting task gets its ready row and every running one
 * its running row; after it, a waiting task is claimed when due and not before, a running task
 * whose worker lives finishes under its old lease, one whose lease ran out is rescued, and each
 * task's history reads as before. The migration refuses to run while a replica of that release is
 * connected.
 */
final class TaskTablesUpgradeIntegrationTests {

    private static final Duration PATIENT = Duration.ofSeconds(30);
    private static final String QUEUE = "upgraded";
    private static final String TYPE = "no-handler-here";

    @Test
    void aDatabaseOfThePreviousReleaseUpgradesWithEveryTaskInItsPlaceAndWorkGoesOn() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        String name = "tasklane_upgrade_" + UUID.randomUUID().toString().substring(0, 8);
        String jdbcUrl = server.jdbcUrl(name);
        try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        }
        try {
            Migrations.flyway(jdbcUrl, server, "22").migrate();
            long live;
            long expired;
            long queued;
            long delayed;
            List<Long> finished = new ArrayList<>();
            try (Connection old = DriverManager.getConnection(jdbcUrl, server.user(), server.password());
                 Statement statement = old.createStatement()) {
                // As the previous release left them: claimed by its own claim function, with their events.
                live = enqueue(old, "now()");
                claimOne(statement, 3_600_000);
                expired = enqueue(old, "now()");
                claimOne(statement, 3_600_000);
                statement.execute("UPDATE task SET lease_expires_at = now() - interval '1 second' WHERE id = " + expired);
                queued = enqueue(old, "now()");
                delayed = enqueue(old, "now() + interval '1 hour'");
                for (String state : List.of("succeeded", "failed", "cancelled")) {
                    long id = enqueue(old, "now()");
                    statement.execute("UPDATE task SET state = '" + state + "', finished_at = now() WHERE id = " + id);
                    EventRows.append(old, id, state, "{}");
                    finished.add(id);
                }
                // and one that finished long ago, with its events, for retention to find after the upgrade
                long ancient = enqueue(old, "now()");
                statement.execute("UPDATE task SET state = 'succeeded', finished_at = now() - interval '10 days' WHERE id = "
                        + ancient);
                EventRows.append(old, ancient, "succeeded", "{}");
                statement.execute("UPDATE task_event_batch SET at = now() - interval '10 days' WHERE " + ancient
                        + " = ANY (task_ids)");
                finished.add(ancient);
            }
            assertThat(column(jdbcUrl, server, "SELECT state FROM task WHERE id IN (" + live + ", " + expired + ")"))
                    .containsExactly("running", "running");

            // A replica of the previous release still connected: the migration refuses.
            try (Connection oldReplica = DriverManager.getConnection(jdbcUrl, Migrations.listener(server))) {
                assertThatThrownBy(() -> Migrations.flyway(jdbcUrl, server, null).migrate())
                        .isInstanceOf(FlywayException.class)
                        .hasMessageContaining("replicas of an earlier release are connected");
            }
            Migrations.flyway(jdbcUrl, server, null).migrate();

            assertThat(column(jdbcUrl, server, "SELECT id FROM task_ready ORDER BY id"))
                    .containsExactly(Long.toString(queued), Long.toString(delayed));
            assertThat(column(jdbcUrl, server, "SELECT id FROM task_running ORDER BY id"))
                    .containsExactly(Long.toString(live), Long.toString(expired));

            try (ConfigurableApplicationContext replica = Replicas.start("", Map.of(
                    "spring.r2dbc.url", "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + name,
                    "tasklane.rescue-interval", "200ms", "tasklane.retention", "7d",
                    "tasklane.maintenance.retention-interval", "500ms"))) {
                Tasks tasks = new Tasks(Replicas.client(replica));
                SseClient sse = new SseClient(Replicas.port(replica));

                // The task whose lease ran out is rescued, as before the upgrade.
                await().atMost(PATIENT).until(() -> tasks.get(expired).get("state").stringValue().equals("queued"));
                assertThat(tasks.get(expired).get("lastError").stringValue()).isEqualTo("lease expired");

                // The worker that holds the live lease finishes its task.
                JsonNode done = Replicas.client(replica).post().uri("/api/v1/tasks/" + live + "/complete")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"workerId\": \"w-old\"}").exchange()
                        .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
                assertThat(done.get("state").stringValue()).isEqualTo("succeeded");
                assertThat(sse.events("/api/v1/tasks/" + live + "/events", null).collectList().block(PATIENT))
                        .extracting(SseClient.Event::event).containsExactly("queued", "running", "succeeded");

                // A claim now takes what is due, the rescued task included, and leaves the delayed one.
                JsonNode claimed = Replicas.client(replica).post().uri("/api/v1/queues/" + QUEUE + "/claims")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"workerId\": \"w-new\", \"max\": 10}")
                        .exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
                List<Long> claimedIds = new ArrayList<>();
                claimed.get("tasks").forEach(task -> claimedIds.add(task.get("id").longValue()));
                assertThat(claimedIds).as("%s / %s", column(jdbcUrl, server, "SELECT id || ' ' || state || ' ' || run_at"
                        + " || ' ' || now() FROM task ORDER BY id"), column(jdbcUrl, server, "SELECT id || ' ' || run_at FROM task_ready"))
                        .containsExactlyInAnyOrder(expired, queued);
                assertThat(tasks.get(delayed).get("state").stringValue()).isEqualTo("queued");
                assertThat(column(jdbcUrl, server, "SELECT id FROM task_ready ORDER BY id"))
                        .containsExactly(Long.toString(delayed));
                assertThat(column(jdbcUrl, server, "SELECT id FROM task_running ORDER BY id"))
                        .containsExactlyInAnyOrder(Long.toString(expired), Long.toString(queued));
                assertThat(finished.subList(0, 3).stream().map(id -> tasks.get(id).get("state").stringValue()).toList())
                        .containsExactly("succeeded", "failed", "cancelled");

                // Retention finds the task that finished long ago through its events, and takes both.
                long ancient = finished.get(3);
                await().atMost(PATIENT).until(() -> column(jdbcUrl, server, "SELECT id FROM task WHERE id = " + ancient).isEmpty());
                assertThat(column(jdbcUrl, server, "SELECT first_id FROM task_event_batch WHERE " + ancient + " = ANY (task_ids)"))
                        .isEmpty();
            }
        } finally {
            try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            }
        }
    }

    /** A task and its queued event, as the previous release's enqueue wrote them; returns its id. */
    private static long enqueue(Connection old, String runAt) throws SQLException {
        long id;
        try (Statement statement = old.createStatement();
             var rows = statement.executeQuery("INSERT INTO task (queue, type, run_at) VALUES ('" + QUEUE + "', '"
                     + TYPE + "', " + runAt + ") RETURNING id")) {
            rows.next();
            id = rows.getLong(1);
        }
        EventRows.append(old, id, "queued", "{\"runAt\": null, \"error\": null}");
        return id;
    }

    /** Claims the next due task with the previous release's own claim function, for worker w-old. */
    private static void claimOne(Statement statement, long leaseMs) throws SQLException {
        statement.execute("SELECT * FROM tasklane_claim_any_type('" + QUEUE + "', 1, 'w-old', '" + UUID.randomUUID()
                + "', " + leaseMs + ", false, NULL, NULL)");
    }

    private static List<String> column(String jdbcUrl, TestDatabase.Coordinates server, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(jdbcUrl, server.user(), server.password());
             Statement statement = connection.createStatement();
             var rows = statement.executeQuery(sql)) {
            List<String> values = new ArrayList<>();
            while (rows.next()) {
                values.add(rows.getString(1));
            }
            return values;
        }
    }
}
