package dev.tasklane.config;

import java.time.Duration;
import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Every {@code TASKLANE_*} setting of the contract, bound once at start and validated so that a
 * bad value stops the replica before it serves anything. Environment variables map by Boot's
 * relaxed binding ({@code TASKLANE_RETRY_BASE_DELAY} is {@code tasklane.retry.base-delay}).
 *
 * @param api bearer tokens for the API
 * @param worker in-process queues and the lease on their running tasks
 * @param rescueInterval how often expired leases are looked for
 * @param retry backoff between attempts
 * @param retention how long terminal tasks and their events are kept
 * @param maxPayloadBytes the largest {@code payload} of one task
 * @param maxRequestBytes the largest request body
 * @param http limits on the built-in {@code http} task type
 * @param listenUrl a direct R2DBC URL for LISTEN; derived from {@code spring.r2dbc.url} if unset
 * @param maintenance the loops any replica runs (lease rescue, registry clean-up, retention)
 * @param events the event log reader
 * @param metrics the metrics read from the database
 * @param taskTimeout how long one attempt of a task may run when its enqueue gives no {@code timeoutSeconds}
 * @param database timeouts and the workers' own pool
 * @param sse the event streams' limits
 * @param queues {@code TASKLANE_QUEUES}: a JSON document {@code {"queue": {flow control}}} applied at each start
 * @param scheduler how the cron schedules are fired
 */
@Validated
@ConfigurationProperties("tasklane")
public record TasklaneProperties(
        @DefaultValue @Valid Api api,
        @DefaultValue @Valid Worker worker,
        @DefaultValue("5s") @NotNull Duration rescueInterval,
        @DefaultValue @Valid Retry retry,
        @DefaultValue("7d") @NotNull Duration retention,
        @DefaultValue("262144") @Min(1) long maxPayloadBytes,
        @DefaultValue("16777216") @Min(1024) @Max(Integer.MAX_VALUE) long maxRequestBytes,
        @DefaultValue @Valid Http http,
        @Nullable String listenUrl,
        @DefaultValue @Valid Maintenance maintenance,
        @DefaultValue @Valid Events events,
        @DefaultValue @Valid Metrics metrics,
        @DefaultValue("2h") @NotNull Duration taskTimeout,
        @DefaultValue @Valid Database database,
        @DefaultValue @Valid Sse sse,
        @Nullable String queues,
        @DefaultValue @Valid Scheduler scheduler) {

    public TasklaneProperties {
        if (taskTimeout.compareTo(Duration.ofSeconds(1)) < 0 || taskTimeout.compareTo(Duration.ofDays(7)) > 0) {
            throw new IllegalArgumentException("TASKLANE_TASK_TIMEOUT must be within 1s..7d, not " + taskTimeout);
        }
    }

    /**
     * @param tokens accepted bearer tokens; empty means one is generated at start
     * @param requestTimeout how long a request may take to arrive once it has begun (headers and
     *                       body); a client that sends half a request and stops is dropped then
     */
    public record Api(@DefaultValue List<String> tokens, @DefaultValue("30s") @NotNull Duration requestTimeout) {

        public Api {
            tokens = tokens.stream().map(String::strip).filter(t -> !t.isEmpty()).toList();
        }

        @Override
        public String toString() {
            return "Api[tokens=" + tokens.size() + " configured, requestTimeout=" + requestTimeout + "]";
        }
    }

    /**
     * @param queues {@code name:concurrency} entries worked in-process
     * @param lease lease on a running in-process task, renewed while it runs
     * @param pollInterval the safety-net poll of each pipeline (wake-ups normally come first)
     */
    public record Worker(@DefaultValue("default:16") List<String> queues,
                         @DefaultValue("30s") @NotNull Duration lease,
                         @DefaultValue("1s") @NotNull Duration pollInterval) {

        public Worker {
            queues = queues.stream().map(String::strip).filter(q -> !q.isEmpty()).toList();
        }
    }

    /**
     * @param baseDelay delay before the second attempt
     * @param maxDelay cap on any delay
     */
    public record Retry(@DefaultValue("1s") @NotNull Duration baseDelay,
                        @DefaultValue("1h") @NotNull Duration maxDelay) {
    }

    /** @param pollInterval the reader's safety-net poll while anyone is subscribed (NOTIFY normally wakes it first) */
    public record Events(@DefaultValue("250ms") @NotNull Duration pollInterval) {
    }

    /** @param depthInterval how often the queue depth gauges are read (one query per replica, not one per scrape) */
    public record Metrics(@DefaultValue("15s") @NotNull Duration depthInterval) {
    }

    /**
     * @param enabled false only in tests that must not have other tests' rows rescued or pruned
     * @param retentionInterval how often retention looks for old terminal tasks (the contract asks for 10 minutes at most)
     */
    public record Maintenance(@DefaultValue("true") boolean enabled,
                              @DefaultValue("1m") @NotNull Duration retentionInterval) {
    }

    /**
     * @param statementTimeout how long a statement, a lock wait or an idle open transaction may take
     *                         (kept by PostgreSQL, and by the service a second later for a
     *                         connection that stops answering without closing; see DatabaseBounds)
     * @param workerPoolSize connections of the in-process workers' own pool (renewals, outcomes,
     *                       claims, rescue), apart from the main pool
     */
    public record Database(@DefaultValue("30s") @NotNull Duration statementTimeout,
                           @DefaultValue("6") @Min(2) @Max(100) int workerPoolSize) {
    }

    /** @param maxSubscribers event streams one replica serves at once; beyond, 503 with Retry-After */
    public record Sse(@DefaultValue("10000") @Min(1) int maxSubscribers) {
    }

    /**
     * @param interval how often each replica looks for due fire times
     * @param misfireGrace a fire time due longer ago than this was missed (no replica ran), and
     *                     the schedule's catchUp decides whether it is made
     */
    public record Scheduler(@DefaultValue("1s") @NotNull Duration interval,
                            @DefaultValue("1m") @NotNull Duration misfireGrace) {
    }

    /** @param allowedHosts hosts or CIDRs that {@code http} tasks may reach although private */
    public record Http(@DefaultValue List<String> allowedHosts) {

        public Http {
            allowedHosts = allowedHosts.stream().map(String::strip).filter(h -> !h.isEmpty()).toList();
        }
    }
}
