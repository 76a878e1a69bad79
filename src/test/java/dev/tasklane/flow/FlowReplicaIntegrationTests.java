package dev.tasklane.flow;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Limits across three replicas and ten pull workers, declared by TASKLANE_QUEUES, and proven from
 * the event log in event-id order, never by sampling: an event's id is drawn after every claim or
 * outcome it depends on had committed, so replaying the log in id order can only undercount what
 * ran at once, never overcount it.
 */
final class FlowReplicaIntegrationTests {

    private static final int MAX_RUNNING = 5;
    private static final int RATE = 50;

    @Test
    void limitsHoldExactlyAcrossReplicasAndPullWorkers() throws Exception {
        String exact = TaskFixtures.uniqueQueue("exact");
        String perKey = TaskFixtures.uniqueQueue("per-key");
        String rated = TaskFixtures.uniqueQueue("rated");
        String declared = "{\"" + exact + "\": {\"maxRunning\": " + MAX_RUNNING + "},"
                + " \"" + perKey + "\": {\"maxRunningPerKey\": 1},"
                + " \"" + rated + "\": {\"rate\": {\"count\": " + RATE + ", \"periodSeconds\": 1}}}";
        Map<String, String> settings = Map.of("tasklane.queues", declared);
        String worked = exact + ":4," + perKey + ":4," + rated + ":16";
        List<ConfigurableApplicationContext> replicas = new ArrayList<>();
        ExecutorService pullers = Executors.newFixedThreadPool(10);
        AtomicBoolean stop = new AtomicBoolean();
        try {
            for (int i = 0; i < 3; i++) {
                replicas.add(Replicas.start(worked, settings));
            }
            WebTestClient api = Replicas.client(replicas.get(0));
            JsonNode limits = queueEntry(api, exact).get("limits");
            assertThat(limits.get("maxRunning").intValue()).isEqualTo(MAX_RUNNING);

            enqueue(api, exact, IntStream.range(0, 300).mapToObj(i -> "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 30}}").toList());
            enqueue(api, perKey, IntStream.range(0, 200).mapToObj(i -> "{\"type\": \"sleep\", \"concurrencyKey\": \"k"
                    + (i % 20) + "\", \"payload\": {\"durationMs\": 40}}").toList());
            enqueue(api, rated, IntStream.range(0, 600).mapToObj(i -> "{\"type\": \"noop\"}").toList());

            List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                WebTestClient client = Replicas.client(replicas.get(i % 3));
                String queue = i < 7 ? exact : perKey;
                String worker = "puller-" + i;
                running.add(pullers.submit(() -> pull(client, queue, worker, stop)));
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> unfinished(exact) + unfinished(perKey) == 0);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> unfinished(rated) == 0);
            stop.set(true);
            for (Future<?> puller : running) {
                puller.get();
            }

            assertThat(mostRunningAtOnce(exact).values()).containsExactly(MAX_RUNNING); // reached, never passed
            Map<String, Integer> perKeyMost = mostRunningAtOnce(perKey);
            assertThat(perKeyMost).hasSize(20).allSatisfy((key, most) -> assertThat(most).as(key).isEqualTo(1));
            List<Instant> starts = startTimes(rated);
            assertThat(starts).hasSize(600);
            for (int i = RATE; i < starts.size(); i++) {
                // any window of one second holds at most RATE starts, the burst at the beginning too
                assertThat(Duration.between(starts.get(i - RATE), starts.get(i))).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            }
            Instant from = starts.get(0).plusSeconds(1);
            Instant to = from.plusSeconds(10);
            long inTenSeconds = starts.stream().filter(at -> !at.isBefore(from) && at.isBefore(to)).count();
            assertThat(inTenSeconds).isBetween((long) (RATE * 10 * 0.9), (long) (RATE * 10 * 1.1));
        } finally {
            stop.set(true);
            pullers.shutdownNow();
            replicas.forEach(ConfigurableApplicationContext::close);
        }
    }

    private static void pull(WebTestClient client, String queue, String worker, AtomicBoolean stop) {
        while (!stop.get()) {
            JsonNode claimed = client.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"" + worker + "\", \"max\": 3, \"waitSeconds\": 1}").exchange()
                    .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
            for (JsonNode task : claimed.get("tasks")) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                client.post().uri("/api/v1/tasks/{id}/complete", task.get("id").longValue())
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue("{\"workerId\": \"" + worker + "\", \"leaseId\": \"" + task.get("leaseId").stringValue() + "\"}")
                        .exchange().expectStatus().isOk().expectBody().returnResult();
            }
        }
    }

    /**
     * Replays a queue's events in id order: a {@code running} event takes a slot of its task's
     * key, any later event of that task that leaves it not running gives the slot back. Returns,
     * per key ('' for the whole queue when no task has a key), the most slots held at once.
     */
    private static Map<String, Integer> mostRunningAtOnce(String queue) throws SQLException {
        Map<String, Integer> now = new HashMap<>();
        Map<String, Integer> most = new HashMap<>();
        Set<Long> running = new HashSet<>();
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement events = connection.prepareStatement(
                     "SELECT task_id, coalesce(concurrency_key, ''), state FROM task_event WHERE queue = ? ORDER BY id")) {
            events.setString(1, queue);
            try (ResultSet rows = events.executeQuery()) {
                while (rows.next()) {
                    long task = rows.getLong(1);
                    String key = rows.getString(2);
                    boolean isRunning = rows.getString(3).equals("running");
                    if (isRunning && running.add(task)) {
                        int held = now.merge(key, 1, Integer::sum);
                        most.merge(key, held, Math::max);
                    } else if (!isRunning && running.remove(task)) {
                        now.merge(key, -1, Integer::sum);
                    }
                }
            }
        }
        return most;
    }

    /** When each task of the queue started, by the database's clock, earliest first. */
    private static List<Instant> startTimes(String queue) {
        return Sql.column("SELECT (extract(epoch FROM started_at) * 1000000)::bigint FROM task WHERE queue = ?"
                + " ORDER BY started_at", queue).stream()
                .map(micros -> Instant.EPOCH.plus(Long.parseLong(micros), ChronoUnit.MICROS)).toList();
    }

    private static long unfinished(String queue) {
        return Long.parseLong(Sql.column("SELECT count(*) FROM task WHERE queue = ? AND state <> 'succeeded'", queue)
                .get(0));
    }

    private static void enqueue(WebTestClient api, String queue, List<String> items) {
        for (int from = 0; from < items.size(); from += 1000) {
            List<String> chunk = items.subList(from, Math.min(items.size(), from + 1000));
            api.post().uri("/api/v1/queues/{q}/tasks/batch", queue).contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"tasks\": [" + String.join(",", chunk) + "]}").exchange().expectStatus().isCreated()
                    .expectBody().returnResult();
        }
    }

    private static JsonNode queueEntry(WebTestClient api, String queue) {
        JsonNode all = api.get().uri("/api/v1/queues").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        for (JsonNode q : all.get("queues")) {
            if (q.get("name").stringValue().equals(queue)) {
                return q;
            }
        }
        throw new AssertionError("queue " + queue + " not listed");
    }
}
