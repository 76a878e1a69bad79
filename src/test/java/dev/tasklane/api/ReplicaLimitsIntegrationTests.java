package dev.tasklane.api;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Limits a replica defends, on a replica of its own (two event streams at most, two-second
 * request and idle timeouts), and its LISTEN connection, which reaches the database through a
 * proxy that can stop answering without closing, with credentials given only inside the URL.
 * The shared context is the other replica that enqueues.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
final class ReplicaLimitsIntegrationTests extends IntegrationTest {

    private final String worked = TaskFixtures.uniqueQueue("deaf");
    private TcpProxy listenProxy;
    private ConfigurableApplicationContext replica;

    @BeforeAll
    void startReplica() throws IOException {
        TestDatabase.Coordinates database = TestDatabase.get();
        listenProxy = new TcpProxy(database.host(), database.port());
        replica = Replicas.start(worked + ":2", Map.of(
                // the user only inside the URL: the LISTEN connection must find it there too
                "spring.r2dbc.url", "r2dbc:postgresql://" + database.user() + "@" + database.host() + ":"
                        + database.port() + "/" + database.database(),
                "spring.r2dbc.username", "",
                "tasklane.listen-url", "r2dbc:postgresql://127.0.0.1:" + listenProxy.port() + "/" + database.database(),
                "tasklane.worker.poll-interval", "60s",
                "tasklane.sse.max-subscribers", "2",
                "tasklane.api.request-timeout", "2s",
                "server.netty.idle-timeout", "2s"));
    }

    @AfterAll
    void stopReplica() throws IOException {
        listenProxy.restore();
        replica.close();
        listenProxy.close();
    }

    @Test
    void aStreamBeyondTheReplicasLimitIs503WithRetryAfterUntilOneCloses() throws Exception {
        int port = Replicas.port(replica);
        try (Socket first = openStream(port); Socket second = openStream(port)) {
            assertThat(firstBytes(first)).startsWith("HTTP/1.1 200").contains(": connected");
            assertThat(firstBytes(second)).startsWith("HTTP/1.1 200");
            Replicas.client(replica).get().uri("/api/v1/events").exchange()
                    .expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals("Retry-After", "5")
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.detail").isNotEmpty();
            first.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                try (Socket third = openStream(port)) {
                    return firstBytes(third).startsWith("HTTP/1.1 200");
                }
            });
        }
    }

    @Test
    void aClientThatSendsHalfARequestIsDroppedButLongPollsAndStreamsMayBeSilent() throws Exception {
        int port = Replicas.port(replica);
        try (Socket halfHeaders = new Socket(InetAddress.getLoopbackAddress(), port);
             Socket halfBody = new Socket(InetAddress.getLoopbackAddress(), port);
             Socket stream = openStream(port)) {
            halfHeaders.getOutputStream().write("GET /api/v1/tasks HTTP/1.1\r\nHost: 127".getBytes(StandardCharsets.US_ASCII));
            halfBody.getOutputStream().write(("POST /api/v1/queues/q/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + TOKEN + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"type\"")
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(firstBytes(stream)).contains(": connected");
            long started = System.nanoTime();
            // A long poll waits longer than either timeout and still answers.
            JsonNode polled = Replicas.client(replica).post().uri("/api/v1/queues/" + TaskFixtures.uniqueQueue("silent")
                            + "/claims").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"workerId\": \"w\", \"waitSeconds\": 4}").exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(polled.get("tasks")).isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(3900));
            assertThat(closedWithin(halfHeaders, Duration.ofSeconds(5))).as("half headers dropped").isTrue();
            assertThat(closedWithin(halfBody, Duration.ofSeconds(5))).as("half body dropped").isTrue();
            assertThat(closedWithin(stream, Duration.ofMillis(100))).as("a silent stream stays open").isFalse();
        }
    }

    @Test
    void aListenConnectionThatStopsAnsweringIsReplacedAndWakeUpsCrossReplicasAgain() throws Exception {
        Tasks elsewhere = new Tasks(api()); // the shared context: another replica
        assertPickedUpWithoutThePoll(elsewhere);
        List<String> before = listeners();
        listenProxy.stallOpen(); // half-open: nothing arrives, nothing fails
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250)).until(() -> {
            List<String> now = listeners();
            return now.stream().anyMatch(pid -> !before.contains(pid));
        });
        assertPickedUpWithoutThePoll(elsewhere);
    }

    private void assertPickedUpWithoutThePoll(Tasks elsewhere) {
        long id = elsewhere.enqueue(worked, "{\"type\": \"noop\"}").get("id").longValue();
        JsonNode done = elsewhere.awaitState(id, "succeeded", Duration.ofSeconds(10)); // the poll is 60 s
        assertThat(Duration.between(Tasks.time(done, "createdAt"), Tasks.time(done, "startedAt")))
                .isLessThan(Duration.ofSeconds(3));
    }

    private static List<String> listeners() {
        return Sql.column("SELECT pid::text FROM pg_stat_activity WHERE application_name = 'tasklane-listener'"
                + " AND datname = current_database()");
    }

    private static Socket openStream(int port) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.getOutputStream().write(("GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer " + TOKEN + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    /** What the server sent until the stream's first frame, or within two seconds, as text. */
    private static String firstBytes(Socket socket) throws IOException {
        socket.setSoTimeout(2000);
        StringBuilder received = new StringBuilder();
        byte[] buffer = new byte[4096];
        try {
            while (!received.toString().contains("\n\n: connected") && !received.toString().startsWith("HTTP/1.1 5")) {
                int n = socket.getInputStream().read(buffer);
                if (n < 0) {
                    break;
                }
                received.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
            }
        } catch (SocketTimeoutException e) {
            // what arrived so far is the answer
        }
        return received.toString();
    }

    private static boolean closedWithin(Socket socket, Duration patience) throws IOException {
        socket.setSoTimeout((int) patience.toMillis());
        InputStream in = socket.getInputStream();
        long deadline = System.nanoTime() + patience.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                if (in.read() < 0) {
                    return true;
                }
            }
            return false;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }
}
