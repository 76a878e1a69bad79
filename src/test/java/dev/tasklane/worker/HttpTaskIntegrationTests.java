package dev.tasklane.worker;

import java.io.IOException;

import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TestHttpServer;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/** The built-in {@code http} type against a local server (allowed here by TASKLANE_HTTP_ALLOWED_HOSTS). */
final class HttpTaskIntegrationTests extends WorkerIntegrationTest {

    private TestHttpServer server;
    private Tasks tasks;

    @BeforeEach
    void start() throws IOException {
        server = new TestHttpServer();
        tasks = new Tasks(api());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void a2xxAnswerSucceedsWithStatusAndBody() {
        long id = enqueue("{\"url\": \"" + server.url("/ok") + "\", \"body\": {\"n\": 1}, \"headers\": {\"X-Test\": \"1\"}}");
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("result").get("status").intValue()).isEqualTo(200);
        assertThat(done.get("result").get("body").stringValue()).isEqualTo("hello");
        assertThat(done.get("result").get("bodyEncoding").stringValue()).isEqualTo("utf-8");
        assertThat(server.requests()).containsExactly("POST /ok {\"n\":1}");
    }

    @Test
    void numbersInTheBodyAreSentAsTheyWereEnqueuedNotRoundedThroughADouble() {
        long id = enqueue("{\"url\": \"" + server.url("/ok") + "\", \"body\": {\"amount\": 12345678901234567.25,"
                + " \"rate\": 0.10, \"big\": 1e30}}");
        tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(server.requests()).singleElement().asString() // in jsonb's order of keys
                .contains("\"amount\":12345678901234567.25", "\"rate\":0.10", "\"big\":1000000000000000000000000000000");
    }

    @Test
    void aBinaryBodySucceedsInBase64AndATextOneSaysItIsUtf8() {
        long binary = enqueue("{\"url\": \"" + server.url("/binary") + "\", \"method\": \"GET\"}");
        long text = enqueue("{\"url\": \"" + server.url("/ok") + "\", \"method\": \"GET\"}");
        JsonNode binaryResult = tasks.awaitState(binary, "succeeded", PATIENCE).get("result");
        assertThat(binaryResult.get("bodyEncoding").stringValue()).isEqualTo("base64");
        assertThat(java.util.Base64.getDecoder().decode(binaryResult.get("body").stringValue()))
                .containsExactly(TestHttpServer.BINARY);
        JsonNode textResult = tasks.awaitState(text, "succeeded", PATIENCE).get("result");
        assertThat(textResult.get("bodyEncoding").stringValue()).isEqualTo("utf-8");
        assertThat(textResult.get("body").stringValue()).isEqualTo("hello");
    }

    @Test
    void aBinaryErrorBodyIsNamedNotCopiedIntoTheError() {
        long id = tasks.enqueue("wk-http", "{\"type\": \"http\", \"maxAttempts\": 1, \"payload\": {\"url\": \""
                + server.url("/binary-500") + "\"}}").get("id").longValue();
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("lastError").stringValue()).isEqualTo("HTTP 500: 8 bytes of binary content");
    }

    @Test
    void a503IsRetriedAndThenSucceeds() {
        long id = enqueue("{\"url\": \"" + server.url("/flaky") + "\", \"method\": \"GET\"}");
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(2);
        assertThat(done.get("lastError").stringValue()).startsWith("HTTP 503");
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void a404FailsAtOnce() {
        long id = enqueue("{\"url\": \"" + server.url("/missing") + "\"}");
        JsonNode failed = tasks.awaitState(id, "failed", PATIENCE);
        assertThat(failed.get("attempt").intValue()).isEqualTo(1);
        assertThat(failed.get("lastError").stringValue()).startsWith("HTTP 404");
    }

    @Test
    void aLiteralInternalAddressIsRefusedAtEnqueue() {
        for (String url : new String[] {"http://10.1.2.3/", "http://169.254.169.254/latest/meta-data",
                "http://[::1]:8080/", "http://192.168.0.1/", "http://[fd00:ec2::254]/",
                // NAT64 and 6to4 wrappings of loopback and of the metadata address
                "http://[64:ff9b::7f00:1]/", "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
                "http://[2002:7f00:1::]/", "http://[2002:a9fe:a9fe::1]/"}) {
            api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"http\", \"payload\": {\"url\": \"" + url + "\"}}").exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].field").isEqualTo("payload");
        }
    }

    @Test
    void aPayloadThatIsNoRequestIsRefusedAtEnqueue() {
        for (String payload : new String[] {"{}", "{\"url\": \"ftp://example.org/\"}", "{\"url\": 5}",
                "{\"url\": \"http://example.org/\", \"method\": \"BREW\"}",
                "{\"url\": \"http://example.org/\", \"headers\": {\"X\": 1}}",
                "{\"url\": \"http://example.org/\", \"timeoutMs\": 0}"}) {
            api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"http\", \"payload\": " + payload + "}").exchange()
                    .expectStatus().isEqualTo(422).expectBody();
        }
        api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"http\", \"payload\": {\"url\": \"http://example.org/\", \"method\": \"BREW\"}}")
                .exchange().expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].message").value(message -> assertThat((String) message)
                        .contains("[GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS]"));
    }

    @Test
    void headersThatFrameTheRequestOrRouteItAreRefusedAtEnqueueByName() {
        for (String header : new String[] {"Host", "content-length", "Transfer-Encoding", "Connection", "Upgrade", "TE",
                "Trailer", "Proxy-Authorization", "proxy-connection"}) {
            api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"http\", \"payload\": {\"url\": \"http://example.org/\", \"headers\": {\""
                            + header + "\": \"x\"}}}").exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].message").value(message -> assertThat((String) message)
                            .as(header).startsWith("payload.headers." + header + " may not be set"));
        }
        // an ordinary header is fine, and a global address too (64:ff9b:: wrapping 8.8.8.8)
        tasks.enqueue("wk-http-idle", "{\"type\": \"http\", \"payload\": {\"url\": \"http://[64:ff9b::808:808]/\","
                + " \"headers\": {\"X-Trace\": \"1\"}}}");
    }

    @Test
    void aPortOutsideOneTo65535IsRefusedAtEnqueue() {
        for (String url : new String[] {"http://example.org:0/", "http://example.org:65536/", "https://example.org:99999/x"}) {
            api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"http\", \"payload\": {\"url\": \"" + url + "\"}}").exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].message").value(message -> assertThat((String) message)
                            .as(url).contains("a port is 1 to 65535"));
        }
        tasks.enqueue("wk-http-idle", "{\"type\": \"http\", \"payload\": {\"url\": \"http://example.org:65535/\"}}");
    }

    @Test
    void headersThatCannotBeSentAreRefusedAtEnqueueAndTheOthersArriveAsGiven() {
        // names are tokens; values are visible ASCII, space, tab or Latin-1: nothing else is sent unaltered
        for (String header : new String[] {"\"X(A\": \"v\"", "\"X A\": \"v\"", "\"X-A\": \"\\u0001\"",
                "\"X-A\": \"\\u007f\"", "\"X-A\": \"a\\r\\nX-B: 1\"", "\"X-A\": \"\\u0100\"", "\"X-A\": \"😀\""}) {
            api().post().uri("/api/v1/queues/wk-http/tasks").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                    .bodyValue("{\"type\": \"http\", \"payload\": {\"url\": \"" + server.url("/ok") + "\", \"headers\": {"
                            + header + "}}}").exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody().jsonPath("$.errors[0].field").isEqualTo("payload");
        }
        long id = enqueue("{\"url\": \"" + server.url("/headers") + "\", \"method\": \"GET\", \"headers\":"
                + " {\"X-Space\": \"a b\", \"X-Latin\": \"caf\\u00e9\", \"X~Token!\": \"v\"}}");
        JsonNode done = tasks.awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("attempt").intValue()).isEqualTo(1);
        assertThat(server.headers()).contains("x-space: a b", "x-latin: caf\u00e9", "x~token!: v");
    }

    private long enqueue(String payload) {
        return tasks.enqueue("wk-http", "{\"type\": \"http\", \"maxAttempts\": 3, \"payload\": " + payload + "}")
                .get("id").longValue();
    }
}
