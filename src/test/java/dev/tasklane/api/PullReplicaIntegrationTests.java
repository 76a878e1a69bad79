package dev.tasklane.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** Long polls against whole replicas: woken from another replica, many at once, and on shutdown. */
final class PullReplicaIntegrationTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void aLongPollAnswersPromptlyAfterAnEnqueueOnAnotherReplica() throws Exception {
        String queue = TaskFixtures.uniqueQueue("long-poll");
        try (ConfigurableApplicationContext poller = Replicas.start("", Map.of());
             ConfigurableApplicationContext enqueuer = Replicas.start("", Map.of())) {
            WebClient client = webClient(poller);
            for (int round = 0; round < 3; round++) {
                CompletableFuture<String> answer = claim(client, queue, "{\"workerId\": \"lp\", \"waitSeconds\": 20}")
                        .toFuture();
                Thread.sleep(500); // let the poll settle into waiting: it is what is being measured
                long enqueuedAt = System.nanoTime();
                long id = new Tasks(testClient(enqueuer)).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
                String body = answer.get(10, TimeUnit.SECONDS);
                Duration waited = Duration.ofNanos(System.nanoTime() - enqueuedAt);
                assertThat(JSON.readTree(body).get("tasks").get(0).get("id").longValue()).isEqualTo(id);
                assertThat(waited).isLessThan(Duration.ofMillis(900));
            }
        }
    }

    @Test
    void twoHundredLongPollsShareAPoolOfTenAndTheApiStaysFast() throws Exception {
        String queue = TaskFixtures.uniqueQueue("many-polls");
        try (ConfigurableApplicationContext replica = Replicas.start("", Map.of("spring.r2dbc.pool.max-size", "10"))) {
            WebClient client = webClient(replica);
            WebTestClient api = testClient(replica);
            api.get().uri("/api/v1/tasks?limit=1").exchange().expectStatus().isOk().expectBody(); // warm
            CompletableFuture<List<ResponseEntity<String>>> polls = Flux.range(0, 200)
                    .flatMap(i -> client.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                            .bodyValue("{\"workerId\": \"poller-" + i + "\", \"waitSeconds\": 4}")
                            .retrieve().toEntity(String.class), 200)
                    .collectList().toFuture();
            Thread.sleep(1000); // all 200 are waiting now
            for (int i = 0; i < 5; i++) {
                long started = System.nanoTime();
                api.get().uri("/api/v1/tasks?limit=1").exchange().expectStatus().isOk().expectBody();
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
            }
            long id = new Tasks(api).enqueue(queue, "{\"type\": \"t\"}").get("id").longValue();
            List<ResponseEntity<String>> answers = polls.get(30, TimeUnit.SECONDS);
            assertThat(answers).hasSize(200).allSatisfy(r -> assertThat(r.getStatusCode().value()).isEqualTo(200));
            long gotIt = answers.stream().filter(r -> r.getBody().contains("\"id\":" + id)).count();
            assertThat(gotIt).isEqualTo(1);
        }
    }

    @Test
    void aWaitingLongPollAnswersEmptyAtOnceWhenTheReplicaDrains() throws Exception {
        String queue = TaskFixtures.uniqueQueue("drain-poll");
        ConfigurableApplicationContext replica = Replicas.start("", Map.of());
        CompletableFuture<String> answer = claim(webClient(replica), queue, "{\"workerId\": \"w\", \"waitSeconds\": 30}")
                .toFuture();
        Thread.sleep(500);
        long started = System.nanoTime();
        CompletableFuture.runAsync(replica::close);
        assertThat(JSON.readTree(answer.get(10, TimeUnit.SECONDS)).get("tasks")).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }

    private static reactor.core.publisher.Mono<String> claim(WebClient client, String queue, String json) {
        return client.post().uri("/api/v1/queues/{q}/claims", queue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json).retrieve().bodyToMono(String.class);
    }

    private static WebClient webClient(ConfigurableApplicationContext replica) {
        return WebClient.builder().baseUrl("http://127.0.0.1:" + Replicas.port(replica))
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + IntegrationTest.TOKEN).build();
    }

    private static WebTestClient testClient(ConfigurableApplicationContext replica) {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + Replicas.port(replica))
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + IntegrationTest.TOKEN)
                .responseTimeout(Duration.ofSeconds(30)).build();
    }
}
