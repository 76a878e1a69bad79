package dev.tasklane.client.spring;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code tasklane.client.*}: where the service is, and the worker that runs the handler beans.
 *
 * @param url the service's base URL, such as {@code http://tasklane:8080}
 * @param token the API token (scope {@code enqueue}, {@code read}, and {@code work} for a worker)
 * @param responseTimeout how long a call waits for its answer (a long-poll claim: its wait more)
 * @param worker the pull worker
 */
@ConfigurationProperties("tasklane.client")
public record TasklaneClientProperties(String url, String token, @DefaultValue("30s") Duration responseTimeout,
                                       @DefaultValue Worker worker) {

    /**
     * @param queue the queue the handler beans' tasks are claimed from; no worker when unset
     * @param concurrency how many tasks run at once
     * @param leaseSeconds each claim's lease, renewed while the handler runs
     * @param waitSeconds how long one long poll waits
     * @param shutdownGrace how long a shutdown waits for running handlers before handing their tasks back
     * @param workerId the id the service knows the worker by (host name and a random suffix by default)
     */
    public record Worker(String queue, @DefaultValue("8") int concurrency, @DefaultValue("30") int leaseSeconds,
                         @DefaultValue("20") int waitSeconds, @DefaultValue("30s") Duration shutdownGrace,
                         String workerId) {
    }
}
