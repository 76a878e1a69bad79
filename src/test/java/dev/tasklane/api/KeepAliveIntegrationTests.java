package dev.tasklane.api;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clients keep connections alive. Reactor Netty 1.3.6 stopped reading a keep-alive connection
 * when a request answered on the event loop (a health probe, a malformed id) followed one answered
 * from a database thread: the next request was never answered (seen within ten rounds).
 */
final class KeepAliveIntegrationTests extends IntegrationTest {

    private static final int ROUNDS = 300;

    @LocalServerPort
    private int port;

    @Test
    void oneConnectionAnswersEveryRequestWhicheverThreadAnsweredThePreviousOne() throws Exception {
        long id = new Tasks(api()).enqueue(TaskFixtures.uniqueQueue("keep-alive"), "{\"type\": \"noop\"}")
                .get("id").longValue();
        // Answered from the database's thread, then from the event loop at once.
        List<String> paths = List.of("/api/v1/tasks/" + id, "/actuator/health/liveness",
                "/api/v1/tasks/987654321", "/api/v1/tasks/not-a-number");
        List<Integer> expected = List.of(200, 200, 404, 404);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < paths.size(); i++) {
                HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + paths.get(i)))
                        .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(5)).build();
                HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as("round %d, %s", round, paths.get(i)).isEqualTo(expected.get(i));
            }
        }
    }
}
