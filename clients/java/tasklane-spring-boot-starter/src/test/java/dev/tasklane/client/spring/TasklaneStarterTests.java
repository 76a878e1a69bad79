package dev.tasklane.client.spring;

import java.time.Duration;
import java.util.Map;

import dev.tasklane.client.ClaimedTask;
import dev.tasklane.client.NewTask;
import dev.tasklane.client.Task;
import dev.tasklane.client.TasklaneClient;
import dev.tasklane.client.testing.TasklaneService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The starter in an application: the client from two properties, handler beans worked by type. */
final class TasklaneStarterTests {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static TasklaneService service;

    @BeforeAll
    static void start() throws Exception {
        service = TasklaneService.start(Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        service.close();
    }

    @Test
    void handlerBeansAreWorkedByTypeFromTheConfiguredQueue() {
        try (ConfigurableApplicationContext app = application("--tasklane.client.worker.queue=starter",
                "--tasklane.client.worker.concurrency=2")) {
            TasklaneClient client = app.getBean(TasklaneClient.class);
            long greeting = client.enqueue("starter", NewTask.of("greet", Map.of("name", "Ada"))).block(PATIENCE).id();
            long count = client.enqueue("starter", NewTask.of("count", Map.of("text", "a b c"))).block(PATIENCE).id();

            assertThat(awaitTerminal(client, greeting).result().asString()).isEqualTo("hello Ada");
            Task counted = awaitTerminal(client, count);
            assertThat(counted.result().get("words").intValue()).isEqualTo(3);
            assertThat(counted.result().get("onEventLoop").booleanValue()).isFalse();
            assertThat(app.getBean(TasklaneWorkerLifecycle.class).isRunning()).isTrue();
        }
    }

    @Test
    void withoutAQueueThereIsAClientAndNoWorker() {
        try (ConfigurableApplicationContext app = application()) {
            assertThat(app.getBean(TasklaneClient.class).queues().block(PATIENCE)).isNotNull();
            assertThat(app.getBeansOfType(TasklaneWorkerLifecycle.class)).isEmpty();
        }
    }

    private static ConfigurableApplicationContext application(String... arguments) {
        String[] all = new String[arguments.length + 2];
        all[0] = "--tasklane.client.url=" + service.baseUrl();
        all[1] = "--tasklane.client.token=" + TasklaneService.TOKEN;
        System.arraycopy(arguments, 0, all, 2, arguments.length);
        return new SpringApplicationBuilder(Handlers.class).web(WebApplicationType.NONE).run(all);
    }

    private static Task awaitTerminal(TasklaneClient client, long id) {
        return await().atMost(PATIENCE).pollInterval(Duration.ofMillis(100))
                .until(() -> client.get(id).block(PATIENCE), Task::isTerminal);
    }

    @Configuration(proxyBeanMethods = false)
    @org.springframework.boot.autoconfigure.EnableAutoConfiguration
    static class Handlers {

        @Bean
        TasklaneHandler greet() {
            return new TasklaneHandler() {
                @Override
                public String type() {
                    return "greet";
                }

                @Override
                public Mono<?> handle(ClaimedTask task) {
                    return Mono.just("hello " + task.payload().get("name").asString());
                }
            };
        }

        @Bean
        BlockingTasklaneHandler count() {
            return new BlockingTasklaneHandler() {
                @Override
                public String type() {
                    return "count";
                }

                @Override
                public Object handle(ClaimedTask task) {
                    return Map.of("words", task.payload().get("text").asString().split(" ").length,
                            "onEventLoop", Schedulers.isInNonBlockingThread());
                }
            };
        }
    }
}
