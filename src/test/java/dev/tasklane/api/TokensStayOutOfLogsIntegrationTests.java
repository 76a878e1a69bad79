package dev.tasklane.api;

import java.time.Duration;
import java.util.List;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No log line contains a token: not at the levels the service ships, nor with its own loggers
 * at TRACE, through accepted and refused tokens, in the header and as access_token.
 */
@ExtendWith(OutputCaptureExtension.class)
final class TokensStayOutOfLogsIntegrationTests extends IntegrationTest {

    private static final String WRONG = "wrong-token-4f1c9e";

    @LocalServerPort
    private int port;

    @Test
    void noLogLineHoldsATokenWhateverTheCallsDo(CapturedOutput output) {
        LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
        logging.setLogLevel("dev.tasklane", LogLevel.TRACE);
        try {
            String queue = TaskFixtures.uniqueQueue("logs");
            for (String token : List.of(TOKEN, "read-token", "work-token", "hashed-token", WRONG)) {
                anonymous().post().uri("/api/v1/queues/{q}/tasks", queue).header(HttpHeaders.AUTHORIZATION, "Bearer " + token)
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"type\": \"noop\"}").exchange()
                        .expectBody().returnResult();
                anonymous().post().uri("/api/v1/queues/{q}/pause", queue).header(HttpHeaders.AUTHORIZATION, "Bearer " + token)
                        .exchange().expectBody().returnResult();
                anonymous().get().uri("/api/v1/tasks/999999999?access_token=" + token).exchange().expectBody().returnResult();
                anonymous().get().uri("/api/v1/tasks/999999999/events?access_token=" + token).exchange()
                        .expectBody().returnResult();
                anonymous().post().uri("/api/v1/queues/{q}/tasks", queue).header(HttpHeaders.AUTHORIZATION, "Bearer " + token)
                        .contentType(MediaType.APPLICATION_JSON).bodyValue("{not json").exchange().expectBody().returnResult();
            }
            new SseClient(port, "read-token").events("/api/v1/events", null).take(Duration.ofMillis(500))
                    .collectList().block(Duration.ofSeconds(5));
            // the capture sees the service's log at the level set here
            org.slf4j.LoggerFactory.getLogger("dev.tasklane.api").trace("captured at trace");
        } finally {
            logging.setLogLevel("dev.tasklane", null);
        }
        assertThat(output.getAll()).contains("captured at trace");
        for (String token : List.of(TOKEN, "read-token", "work-token", "hashed-token", WRONG)) {
            assertThat(output.getAll()).as("the log").doesNotContain(token);
        }
    }
}
