package dev.tasklane.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three replicas, each with its own scheduler on the real clock, race for the fire times of one
 * schedule that missed half an hour, while one of them stops in the middle: every fire time
 * becomes exactly one task.
 */
final class ScheduleReplicaIntegrationTests {

    private static final int MISSED_MINUTES = 30;

    @Test
    void replicasRacingAndStoppingAroundFireTimesMakeOneTaskPerFireTime() {
        String name = TaskFixtures.uniqueQueue("replica-schedule");
        String queue = TaskFixtures.uniqueQueue("replica-schedule-q");
        List<ConfigurableApplicationContext> replicas = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                replicas.add(Replicas.start("", Map.of()));
            }
            WebTestClient api = Replicas.client(replicas.get(0));
            api.put().uri("/api/v1/schedules/{n}", name).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"cron\": \"* * * * *\", \"queue\": \"" + queue + "\", \"task\": {\"type\": \"t\"},"
                            + " \"catchUp\": \"all\"}")
                    .exchange().expectStatus().isCreated().expectBody().returnResult();
            // as if every replica had been down for half an hour: all of them find it due at once
            Sql.update("UPDATE schedule SET settled_until = date_trunc('minute', now()) - interval '" + MISSED_MINUTES
                    + " minutes', next_fire_at = date_trunc('minute', now()) - interval '" + (MISSED_MINUTES - 1)
                    + " minutes' WHERE name = ?", name);
            replicas.remove(2).close(); // one stops while the others fire

            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                    .until(() -> scheduledFor(name).size() >= MISSED_MINUTES);
            Sql.update("UPDATE schedule SET paused = true WHERE name = ?", name); // no new minute from here on
            List<Instant> made = scheduledFor(name);
            assertThat(made).doesNotHaveDuplicates();
            for (int i = 1; i < made.size(); i++) {
                assertThat(Duration.between(made.get(i - 1), made.get(i))).isEqualTo(Duration.ofMinutes(1));
            }
            assertThat(Sql.column("SELECT count(*) FROM schedule_fire WHERE schedule = ? AND task_id IS NOT NULL", name))
                    .containsExactly(Integer.toString(made.size()));
            api.delete().uri("/api/v1/schedules/{n}", name).exchange().expectStatus().isNoContent();
        } finally {
            replicas.forEach(ConfigurableApplicationContext::close);
        }
    }

    private static List<Instant> scheduledFor(String schedule) {
        return Sql.column("SELECT to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM task"
                + " WHERE schedule = ? ORDER BY scheduled_for", schedule).stream().map(Instant::parse).toList();
    }
}
