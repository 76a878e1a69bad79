package dev.tasklane.testsupport;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.tasklane.TasklaneApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Whole replicas of the service in this JVM, each an application context of its own on the test
 * database: for the tests that are about several replicas or a shutdown. They know the test-only
 * task types of {@link TestHandlers}.
 */
public final class Replicas {

    private Replicas() {
    }

    public static ConfigurableApplicationContext start(String workerQueues, Map<String, String> extra) {
        return start(workerQueues, extra, new Class<?>[0]);
    }

    /** A replica with {@code sources} (test configurations) added to its context. */
    public static ConfigurableApplicationContext start(String workerQueues, Map<String, String> extra, Class<?>... sources) {
        TestDatabase.Coordinates database = TestDatabase.get();
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("server.port", "0");
        properties.put("spring.r2dbc.url", database.r2dbcUrl());
        properties.put("spring.r2dbc.username", database.user());
        properties.put("spring.r2dbc.password", database.password());
        properties.put("tasklane.api.tokens", IntegrationTest.TOKEN);
        properties.put("tasklane.worker.queues", workerQueues);
        properties.put("spring.r2dbc.pool.max-size", "10");
        properties.putAll(extra);
        // As command-line arguments: they outrank application.yml, as an operator's settings do.
        return new SpringApplicationBuilder(TasklaneApplication.class, OwnNettyResources.class, TestHandlers.class)
                .sources(sources)
                .run(properties.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new));
    }

    /**
     * A replica that reaches the database only through {@code proxy}, with short connection
     * timeouts so that a cut shows within seconds.
     */
    public static ConfigurableApplicationContext startBehind(TcpProxy proxy) {
        TestDatabase.Coordinates database = TestDatabase.get();
        return start("", Map.of(
                "spring.r2dbc.url", "r2dbc:postgresql://127.0.0.1:" + proxy.port() + "/" + database.database(),
                "spring.r2dbc.pool.max-acquire-time", "2s",
                "spring.r2dbc.pool.max-create-connection-time", "2s"));
    }

    /** A client of one replica that sends the test token. */
    public static WebTestClient client(ConfigurableApplicationContext replica) {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port(replica))
                .defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + IntegrationTest.TOKEN)
                .responseTimeout(Duration.ofSeconds(30))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(32 * 1024 * 1024))
                .build();
    }

    public static int port(ConfigurableApplicationContext replica) {
        return Integer.parseInt(replica.getEnvironment().getProperty("local.server.port", "0"));
    }
}
