package dev.tasklane.ops;

import java.time.Duration;

import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

final class ProbeIntegrationTests {

    @Test
    void readinessFollowsTheDatabaseWhileLivenessIgnoresIt() throws Exception {
        TestDatabase.Coordinates database = TestDatabase.get();
        try (TcpProxy proxy = new TcpProxy(database.host(), database.port());
             ConfigurableApplicationContext replica = Replicas.startBehind(proxy)) {
            WebTestClient client = WebTestClient.bindToServer()
                    .baseUrl("http://127.0.0.1:" + Replicas.port(replica)).responseTimeout(Duration.ofSeconds(10)).build();
            assertThat(status(client, "/actuator/health/readiness")).isEqualTo(200);

            proxy.cut();
            long cut = System.nanoTime();
            await().atMost(Duration.ofSeconds(15)).until(() -> status(client, "/actuator/health/readiness") == 503);
            assertThat(Duration.ofNanos(System.nanoTime() - cut)).isLessThan(Duration.ofSeconds(10));
            assertThat(status(client, "/actuator/health/liveness")).isEqualTo(200);

            proxy.restore();
            await().atMost(Duration.ofSeconds(15)).until(() -> status(client, "/actuator/health/readiness") == 200);
            assertThat(status(client, "/actuator/health/liveness")).isEqualTo(200);
        }
    }

    private static int status(WebTestClient client, String path) {
        return client.get().uri(path).exchange().expectBody().returnResult().getStatus().value();
    }
}
