package dev.tasklane.events;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

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
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A database written by the release before V022 (events one row each) upgrades with nothing lost:
 * tasks in every state keep their state, lease and history; a client that had read half the log
 * resumes after its cursor without a gap or a duplicate; and the migration refuses to run while a
 * replica of that release is connected.
 */
final class EventStorageUpgradeIntegrationTests {

    private static final Duration PATIENT = Duration.ofSeconds(20);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void aDatabaseOfThePreviousReleaseUpgradesWithEveryTaskAndEventAndAHalfReadClientResumesExactly() throws Exception {
        TestDatabase.Coordinates server = TestDatabase.get();
        String name = "tasklane_upgrade_" + UUID.randomUUID().toString().substring(0, 8);
        String jdbcUrl = server.jdbcUrl(name);
        try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        }
        try {
            Migrations.flyway(jdbcUrl, server, "21").migrate();
            String queue = "upgraded";
            List<Long> ids = new ArrayList<>();
            try (Connection old = DriverManager.getConnection(jdbcUrl, server.user(), server.password());
                 Statement statement = old.createStatement()) {
                // As the previous release left them: one task in each state, with its events.
                for (String state : List.of("queued", "delayed", "running", "succeeded", "failed", "cancelled")) {
                    var rows = statement.executeQuery(
                            "INSERT INTO task (queue, type, run_at) VALUES ('" + queue + "', 'noop', now()"
                                    + (state.equals("delayed") ? " + interval '1 hour'" : "") + ") RETURNING id");
                    rows.next();
                    ids.add(rows.getLong(1));
                    statement.execute(event(rows.getLong(1), "queued", "queued", 0, "{\"runAt\": null, \"error\": null}"));
                }
                statement.execute("UPDATE task SET state = 'running', attempt = 1, started_at = now(), worker_id = 'w-old',"
                        + " lease_id = '" + UUID.randomUUID() + "', lease_expires_at = now() + interval '1 hour',"
                        + " timeout_at = now() + interval '2 hours' WHERE id IN (" + ids.get(2) + ")");
                for (int i = 2; i <= 4; i++) {
                    statement.execute(event(ids.get(i), "running", "running", 1, "{\"workerId\": \"w-old\"}"));
                }
                statement.execute(event(ids.get(2), "progress", "running", 1, "{\"percent\": 50, \"message\": \"half\"}"));
                statement.execute("UPDATE task SET state = 'succeeded', attempt = 1, finished_at = now(),"
                        + " result = '{\"ok\": true}' WHERE id = " + ids.get(3));
                statement.execute(event(ids.get(3), "succeeded", "succeeded", 1, "{\"result\": {\"ok\": true}}"));
                statement.execute("UPDATE task SET state = 'failed', attempt = 1, finished_at = now(), last_error = 'boom'"
                        + " WHERE id = " + ids.get(4));
                statement.execute(event(ids.get(4), "failed", "failed", 1, "{\"error\": \"boom\"}"));
                statement.execute("UPDATE task SET state = 'cancelled', finished_at = now() WHERE id = " + ids.get(5));
                statement.execute(event(ids.get(5), "cancelled", "cancelled", 0, "{}"));
                // An id the old sequence handed out to a transaction that rolled back.
                statement.execute("SELECT nextval('task_event_id_seq')");
            }
            List<String> before = eventsOf(jdbcUrl, server);
            assertThat(before).hasSize(13);
            long halfRead = Long.parseLong(before.get(6).split(" ")[0]);

            // A replica of the previous release still connected: the migration refuses.
            try (Connection oldReplica = DriverManager.getConnection(jdbcUrl, Migrations.listener(server))) {
                assertThatThrownBy(() -> Migrations.flyway(jdbcUrl, server, null).migrate())
                        .isInstanceOf(FlywayException.class)
                        .hasMessageContaining("replicas of an earlier release are connected");
            }
            Migrations.flyway(jdbcUrl, server, null).migrate();

            assertThat(eventsOf(jdbcUrl, server)).as("every event, with its id, task, name, state and detail")
                    .containsExactlyElementsOf(before);
            try (ConfigurableApplicationContext replica = Replicas.start("", Map.of(
                    "spring.r2dbc.url", "r2dbc:postgresql://" + server.host() + ":" + server.port() + "/" + name))) {
                Tasks tasks = new Tasks(Replicas.client(replica));
                SseClient sse = new SseClient(Replicas.port(replica));
                assertThat(List.of("queued", "queued", "running", "succeeded", "failed", "cancelled"))
                        .isEqualTo(ids.stream().map(id -> tasks.get(id).get("state").stringValue()).toList());
                assertThat(tasks.get(ids.get(2)).get("workerId").stringValue()).isEqualTo("w-old");

                // The half-read client resumes: the rest of the old log, then what is written now.
                long fresh = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
                List<SseClient.Event> resumed = SseClient.take(
                        sse.events("/api/v1/events?queue=" + queue, Long.toString(halfRead)), 7, PATIENT);
                List<String> rest = before.subList(7, before.size()).stream().map(line -> line.split(" ")[0]).toList();
                assertThat(resumed.subList(0, 6)).extracting(SseClient.Event::id).containsExactlyElementsOf(rest);
                assertThat(resumed.get(6).event()).isEqualTo("queued");
                assertThat(JSON.readTree(resumed.get(6).data()).get("taskId").longValue()).isEqualTo(fresh);
                assertThat(Long.parseLong(resumed.get(6).id())).isGreaterThan(Long.parseLong(rest.get(rest.size() - 1)) + 1);

                // The running task's lease still holds: its worker finishes it, and its own stream
                // replays its old events and the new one, then ends.
                JsonNode done = Replicas.client(replica).post().uri("/api/v1/tasks/" + ids.get(2) + "/complete")
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"workerId\": \"w-old\"}").exchange()
                        .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
                assertThat(done.get("state").stringValue()).isEqualTo("succeeded");
                List<SseClient.Event> history = sse.events("/api/v1/tasks/" + ids.get(2) + "/events", null)
                        .collectList().block(PATIENT);
                assertThat(history).extracting(SseClient.Event::event)
                        .containsExactly("queued", "running", "progress", "succeeded");
                assertThat(history.subList(0, 3)).extracting(SseClient.Event::id).containsExactlyElementsOf(
                        before.stream().filter(line -> line.split(" ")[1].equals(Long.toString(ids.get(2))))
                                .map(line -> line.split(" ")[0]).toList());
                assertThat(sse.events("/api/v1/tasks/" + ids.get(4) + "/events", null).collectList().block(PATIENT))
                        .extracting(SseClient.Event::event).containsExactly("queued", "running", "failed");
            }
        } finally {
            try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
            }
        }
    }

    /** An event row as the previous release wrote it. */
    private static String event(long taskId, String eventName, String state, int attempt, String detail) {
        return "INSERT INTO task_event (task_id, queue, task_type, name, state, attempt, detail)"
                + " SELECT id, queue, type, '" + eventName + "', '" + state + "', " + attempt + ", '" + detail + "'::jsonb"
                + " FROM task WHERE id = " + taskId;
    }

    /** Every event as one line: id, task, name, state, attempt, detail, in id order. */
    private static List<String> eventsOf(String jdbcUrl, TestDatabase.Coordinates server) throws SQLException {
        try (Connection connection = DriverManager.getConnection(jdbcUrl, server.user(), server.password());
             Statement statement = connection.createStatement();
             var rows = statement.executeQuery("SELECT id || ' ' || task_id || ' ' || name || ' ' || state || ' '"
                     + " || attempt || ' ' || coalesce(detail::text, '{}') || ' ' || at FROM task_event ORDER BY id")) {
            List<String> lines = new ArrayList<>();
            while (rows.next()) {
                lines.add(rows.getString(1));
            }
            return lines;
        }
    }
}
