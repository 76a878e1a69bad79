package dev.tasklane.api;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.RawHttp;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every error is an RFC 9457 problem with status, title and detail, also those that the
 * framework raises before any controller runs: the firewall's rejected paths, unknown routes,
 * wrong methods, unacceptable or unsupported media types, bodies over the limit.
 */
final class ProblemResponsesIntegrationTests extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    private int port;

    @Test
    void pathsTheFirewallRejectsAreProblems() throws Exception {
        assertProblem(raw("POST /api/v1/queues/qu%2Feue/tasks HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 0",
                ""), 400);
        assertProblem(raw("GET /api/v1/../v1/tasks/1 HTTP/1.1", ""), 400);
        assertProblem(raw("GET /api/v1/tasks/%2e%2e/1 HTTP/1.1", ""), 400);
        assertProblem(raw("GET /api/v1/tasks/;jsessionid=1 HTTP/1.1", ""), 400);
        assertProblem(raw("GET /api/v1/tasks/caf%E9 HTTP/1.1", ""), 400); // é in Latin-1: not UTF-8
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        raw.writeBytes("GET /api/v1/tasks/caf".getBytes(StandardCharsets.US_ASCII));
        raw.write(0xE9); // not even percent-encoded
        raw.writeBytes(" HTTP/1.1".getBytes(StandardCharsets.US_ASCII));
        assertProblem(RawHttp.exchange(port, raw.toByteArray(), new byte[0]), 400);
    }

    @Test
    void anUnknownRouteIs404AndAWrongMethod405WithAllow() throws Exception {
        assertProblem(raw("GET /api/v1/nothing-here HTTP/1.1", ""), 404);
        String wrongMethod = raw("PUT /api/v1/tasks/1 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2", "{}");
        assertProblem(wrongMethod, 405);
        assertThat(wrongMethod.toLowerCase()).containsPattern("\r\nallow: [a-z, ]*get");
    }

    @Test
    void unacceptableAndUnsupportedMediaTypesAre406And415() throws Exception {
        assertProblem(raw("GET /api/v1/tasks/1 HTTP/1.1\r\nAccept: text/csv", ""), 406);
        assertProblem(raw("POST /api/v1/queues/q/tasks HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 1", "x"), 415);
    }

    @Test
    void aCompressedBodyIs415WithAcceptEncodingAndEnqueuesNothing() throws Exception {
        String queue = TaskFixtures.uniqueQueue("gzip");
        byte[] task = "{\"type\": \"noop\"}".getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream zipped = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(zipped)) {
            gzip.write(task);
        }
        byte[] gzipped = zipped.toByteArray();
        String refused = RawHttp.exchange(port, head("POST /api/v1/queues/" + queue + "/tasks", "gzip", gzipped.length),
                gzipped);
        assertProblem(refused, 415);
        assertThat(refused.toLowerCase()).contains("\r\naccept-encoding: identity\r\n").contains("content-encoding: gzip");
        assertProblem(RawHttp.exchange(port, head("POST /api/v1/queues/" + queue + "/tasks/batch", "GZIP, identity",
                gzipped.length), gzipped), 415);
        assertProblem(RawHttp.exchange(port, head("POST /api/v1/nothing-here", "gzip", gzipped.length), gzipped), 404);
        api().get().uri("/api/v1/tasks?queue={q}", queue).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.tasks.length()").isEqualTo(0);
        assertThat(RawHttp.exchange(port, head("POST /api/v1/queues/" + queue + "/tasks", "identity", task.length), task))
                .startsWith("HTTP/1.1 201 ");
    }

    @Test
    void aBodyOverTheLimitIs413() {
        byte[] big = new byte[17 * 1024 * 1024];
        java.util.Arrays.fill(big, (byte) ' ');
        big[0] = '{';
        big[big.length - 1] = '}';
        api().post().uri("/api/v1/queues/q/tasks").contentType(MediaType.APPLICATION_JSON).bodyValue(big).exchange()
                .expectStatus().isEqualTo(413)
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectHeader().valueEquals("Connection", "close")
                .expectBody().jsonPath("$.status").isEqualTo(413).jsonPath("$.title").isNotEmpty()
                .jsonPath("$.detail").isNotEmpty();
    }

    private static byte[] head(String requestLine, String contentEncoding, int contentLength) {
        return (requestLine + " HTTP/1.1\r\nContent-Type: application/json\r\nContent-Encoding: " + contentEncoding
                + "\r\nContent-Length: " + contentLength).getBytes(StandardCharsets.US_ASCII);
    }

    private String raw(String head, String body) throws Exception {
        return RawHttp.exchange(port, head.getBytes(StandardCharsets.ISO_8859_1), body.getBytes(StandardCharsets.UTF_8));
    }

    private static void assertProblem(String response, int status) {
        assertThat(response).startsWith("HTTP/1.1 " + status + " ");
        int split = response.indexOf("\r\n\r\n");
        String head = response.substring(0, split).toLowerCase();
        assertThat(head).contains("content-type: application/problem+json");
        JsonNode problem = JSON.readTree(response.substring(split + 4));
        assertThat(problem.get("status").intValue()).isEqualTo(status);
        assertThat(problem.get("title").stringValue()).isNotBlank();
        assertThat(problem.get("detail").stringValue()).isNotBlank();
    }
}
