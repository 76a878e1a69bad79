package dev.tasklane.api;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The schedules API, and the service's own scheduler making a task at a fire time. */
final class ScheduleApiIntegrationTests extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    private int port;

    private String name;
    private String queue;

    @BeforeEach
    void setUp() {
        name = TaskFixtures.uniqueQueue("nightly");
        queue = TaskFixtures.uniqueQueue("reports");
    }

    @AfterEach
    void deleteSchedule() {
        api().delete().uri("/api/v1/schedules/{n}", name).exchange();
    }

    @Test
    void aPutCreatesThenReplacesAndTheScheduleShowsItsNextFiveRunsInItsTimeZone() {
        String body = "{\"cron\": \"30 2 * * *\", \"timezone\": \"Europe/Berlin\", \"queue\": \"" + queue + "\","
                + " \"task\": {\"type\": \"report\", \"payload\": {\"b\": 1, \"a\": 2}, \"priority\": 5}}";
        EntityExchangeResult<JsonNode> created = put(body, 201);
        assertThat(created.getResponseHeaders().getLocation().toString()).isEqualTo("/api/v1/schedules/" + name);
        JsonNode schedule = created.getResponseBody();
        assertThat(schedule.get("name").stringValue()).isEqualTo(name);
        assertThat(schedule.get("overlap").stringValue()).isEqualTo("allow");
        assertThat(schedule.get("catchUp").stringValue()).isEqualTo("none");
        assertThat(schedule.get("paused").booleanValue()).isFalse();
        assertThat(schedule.get("task").get("type").stringValue()).isEqualTo("report");
        assertThat(schedule.get("task").get("priority").intValue()).isEqualTo(5);
        assertThat(schedule.get("task").get("maxAttempts").intValue()).isEqualTo(5);
        assertThat(schedule.get("lastFire").isNull()).isTrue();
        JsonNode nextRuns = get().get("nextRuns");
        assertThat(nextRuns).hasSize(5);
        nextRuns.forEach(run -> {
            ZonedDateTime local = Instant.parse(run.stringValue()).atZone(ZoneId.of("Europe/Berlin"));
            assertThat(local.getHour() * 60 + local.getMinute()).isIn(150, 180); // 02:30, or 03:00 after a gap
        });

        JsonNode replaced = put("{\"cron\": \"@hourly\", \"queue\": \"" + queue + "\", \"task\": {\"type\": \"report\"},"
                + " \"overlap\": \"skip\", \"catchUp\": \"latest\"}", 200).getResponseBody();
        assertThat(replaced.get("timezone").stringValue()).isEqualTo("UTC");
        assertThat(replaced.get("overlap").stringValue()).isEqualTo("skip");
        assertThat(replaced.get("catchUp").stringValue()).isEqualTo("latest");
        List<JsonNode> listed = api().get().uri("/api/v1/schedules").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("schedules").valueStream()
                .filter(s -> s.get("name").stringValue().equals(name)).toList();
        assertThat(listed).singleElement().satisfies(s -> assertThat(s.get("cron").stringValue()).isEqualTo("@hourly"));
    }

    @Test
    void pauseResumeTriggerAndDelete() {
        put("{\"cron\": \"0 0 1 1 *\", \"queue\": \"" + queue + "\", \"task\": {\"type\": \"report\", \"payload\": [1]}}", 201);
        assertThat(post("pause", 200).get("paused").booleanValue()).isTrue();
        JsonNode resumed = post("resume", 200);
        assertThat(resumed.get("paused").booleanValue()).isFalse();
        assertThat(resumed.get("resumedAt").isNull()).isFalse();

        post("pause", 200);
        EntityExchangeResult<JsonNode> triggered = api().post().uri("/api/v1/schedules/{n}/trigger", name).exchange()
                .expectStatus().isCreated().expectBody(JsonNode.class).returnResult();
        JsonNode task = triggered.getResponseBody();
        assertThat(triggered.getResponseHeaders().getLocation().toString()).isEqualTo("/api/v1/tasks/" + task.get("id").longValue());
        assertThat(task.get("queue").stringValue()).isEqualTo(queue);
        assertThat(task.get("schedule").stringValue()).isEqualTo(name);
        assertThat(task.get("scheduledFor").isNull()).isFalse();
        assertThat(task.get("payload").toString()).isEqualTo("[1]");
        JsonNode listed = api().get().uri("/api/v1/tasks?schedule={n}", name).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
        assertThat(listed).singleElement().satisfies(t -> assertThat(t.get("id").longValue()).isEqualTo(task.get("id").longValue()));

        api().delete().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isNoContent();
        api().get().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isNotFound()
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON);
        api().delete().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isNotFound();
        post("pause", 404);
        post("resume", 404);
        post("trigger", 404);
        api().get().uri("/api/v1/tasks/{id}", task.get("id").longValue()).exchange().expectStatus().isOk(); // its tasks stay
    }

    @Test
    void theServicesSchedulerMakesTheTaskOfADueFireTimeWithItsScheduleInTheEvents() {
        put("{\"cron\": \"* * * * *\", \"queue\": \"" + queue + "\", \"task\": {\"type\": \"report\"}}", 201);
        // as if it had been created a minute ago and the last fire time were due now
        Sql.update("UPDATE schedule SET settled_until = date_trunc('minute', now()) - interval '1 second',"
                + " next_fire_at = date_trunc('minute', now()) WHERE name = ?", name);
        JsonNode[] made = new JsonNode[1];
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            JsonNode tasks = api().get().uri("/api/v1/tasks?schedule={n}", name).exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody().get("tasks");
            made[0] = tasks.isEmpty() ? null : tasks.get(0);
            return made[0] != null;
        });
        Instant scheduledFor = Instant.parse(made[0].get("scheduledFor").stringValue());
        assertThat(scheduledFor.getEpochSecond() % 60).isZero();
        List<SseClient.Event> events = SseClient.take(new SseClient(port)
                .events("/api/v1/tasks/" + made[0].get("id").longValue() + "/events", null), 1, Duration.ofSeconds(10));
        JsonNode queued = JSON.readTree(events.get(0).data());
        assertThat(queued.get("schedule").stringValue()).isEqualTo(name);
        assertThat(queued.get("scheduledFor").stringValue()).isEqualTo(made[0].get("scheduledFor").stringValue());
        assertThat(get().get("lastFire").get("taskId").longValue()).isEqualTo(made[0].get("id").longValue());
    }

    @Test
    void invalidSchedulesAre422NamingTheField() {
        String task = "\"task\": {\"type\": \"report\"}";
        assertInvalid("{\"cron\": \"61 * * * *\", \"queue\": \"q\", " + task + "}", "cron");
        assertInvalid("{\"cron\": \"* * * *\", \"queue\": \"q\", " + task + "}", "cron");
        assertInvalid("{\"cron\": \"0 0 31 2 *\", \"queue\": \"q\", " + task + "}", "cron");
        assertInvalid("{\"queue\": \"q\", " + task + "}", "cron");
        assertInvalid("{\"cron\": \"@daily\", \"timezone\": \"Mars/Olympus\", \"queue\": \"q\", " + task + "}", "timezone");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"not a queue\", " + task + "}", "queue");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\"}", "task");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", \"task\": {\"type\": \"bad type\"}}", "task.type");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", \"task\": {\"type\": \"t\", \"priority\": 101}}", "task.priority");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", \"task\": {\"type\": \"t\", \"runAt\": \"2030-01-01T00:00:00Z\"}}",
                "task.runAt");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", " + task + ", \"overlap\": \"never\"}", "overlap");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", " + task + ", \"catchUp\": \"some\"}", "catchUp");
        assertInvalid("{\"cron\": \"@daily\", \"queue\": \"q\", " + task + ", \"every\": 5}", "every");
        api().put().uri("/api/v1/schedules/{n}", "bad name").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cron\": \"@daily\", \"queue\": \"q\", " + task + "}").exchange().expectStatus().isEqualTo(422);
        api().put().uri("/api/v1/schedules/{n}", name).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cron\": 5, \"queue\": \"q\", " + task + "}").exchange().expectStatus().isBadRequest();
        api().get().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isNotFound();
    }

    private void assertInvalid(String body, String field) {
        JsonNode problem = api().put().uri("/api/v1/schedules/{n}", name).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isEqualTo(422)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(problem.get("errors").findValuesAsString("field")).as(body).contains(field);
    }

    private EntityExchangeResult<JsonNode> put(String body, int status) {
        return api().put().uri("/api/v1/schedules/{n}", name).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isEqualTo(status).expectBody(JsonNode.class).returnResult();
    }

    private JsonNode get() {
        return api().get().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private JsonNode post(String action, int status) {
        return api().post().uri("/api/v1/schedules/{n}/" + action, name).exchange().expectStatus().isEqualTo(status)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }
}
