package dev.tasklane.client.spring;

import dev.tasklane.client.TasklaneClient;
import dev.tasklane.client.TasklaneWorker;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A {@link TasklaneClient} from {@code tasklane.client.url} and {@code token} (on Boot's
 * {@code WebClient.Builder} where there is one, so its observations apply), and, when
 * {@code tasklane.client.worker.queue} is set, a {@link TasklaneWorker} that runs every
 * {@link TasklaneHandler} and {@link BlockingTasklaneHandler} bean, started and stopped with the
 * application context; with an {@code ObservationRegistry} bean (Boot's, with Micrometer Tracing),
 * each task's handling continues the task's trace.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "tasklane.client", name = "url")
@EnableConfigurationProperties(TasklaneClientProperties.class)
public class TasklaneClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    TasklaneClient tasklaneClient(TasklaneClientProperties properties, ObjectProvider<WebClient.Builder> webClient) {
        TasklaneClient.Builder builder = TasklaneClient.builder(properties.url()).token(properties.token())
                .responseTimeout(properties.responseTimeout());
        webClient.ifAvailable(builder::webClient);
        return builder.build();
    }

    @Bean
    @ConditionalOnProperty(prefix = "tasklane.client.worker", name = "queue")
    TasklaneWorkerLifecycle tasklaneWorker(TasklaneClient client, TasklaneClientProperties properties,
                                           ObjectProvider<TasklaneHandler> handlers,
                                           ObjectProvider<BlockingTasklaneHandler> blockingHandlers,
                                           ObjectProvider<ObservationRegistry> observations) {
        TasklaneClientProperties.Worker settings = properties.worker();
        TasklaneWorker.Builder worker = TasklaneWorker.builder(client, settings.queue())
                .concurrency(settings.concurrency())
                .leaseSeconds(settings.leaseSeconds())
                .waitSeconds(settings.waitSeconds());
        observations.ifAvailable(worker::observationRegistry);
        if (settings.workerId() != null) {
            worker.workerId(settings.workerId());
        }
        handlers.orderedStream().forEach(handler -> worker.handler(handler.type(), handler));
        blockingHandlers.orderedStream().forEach(handler -> worker.blockingHandler(handler.type(), handler));
        return new TasklaneWorkerLifecycle(worker.build(), settings.shutdownGrace());
    }
}
