package dev.tasklane.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tasklane.TasklaneApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Whole replicas of the service in this JVM, each an application context of its own on the test
 * database: for the tests that are about several replicas or a shutdown.
 */
public final class Replicas {

    private Replicas() {
    }

    public static ConfigurableApplicationContext start(String workerQueues, Map<String, String> extra) {
        TestDatabase.Coordinates database = TestDatabase.get();
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "spring.r2dbc.url=" + database.r2dbcUrl(),
                "spring.r2dbc.username=" + database.user(),
                "spring.r2dbc.password=" + database.password(),
                "tasklane.api.tokens=" + IntegrationTest.TOKEN,
                "tasklane.worker.queues=" + workerQueues,
                "spring.r2dbc.pool.max-size=10"));
        extra.forEach((key, value) -> properties.add(key + "=" + value));
        // As command-line arguments: they outrank application.yml, as an operator's settings do.
        return new SpringApplicationBuilder(TasklaneApplication.class)
                .run(properties.stream().map(p -> "--" + p).toArray(String[]::new));
    }

    public static int port(ConfigurableApplicationContext replica) {
        return Integer.parseInt(replica.getEnvironment().getProperty("local.server.port", "0"));
    }
}
