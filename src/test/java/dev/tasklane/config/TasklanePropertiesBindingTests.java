package dev.tasklane.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/** Each TASKLANE_* variable of the contract binds, and every default is the contract's. */
final class TasklanePropertiesBindingTests {

    @Test
    void defaultsAreTheContracts() {
        TasklaneProperties properties = bind(Map.of());
        assertThat(properties.api().tokens()).isEmpty();
        assertThat(properties.worker().queues()).containsExactly("default:16");
        assertThat(properties.worker().lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(properties.rescueInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(properties.retry().baseDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(properties.retry().maxDelay()).isEqualTo(Duration.ofHours(1));
        assertThat(properties.retention()).isEqualTo(Duration.ofDays(7));
        assertThat(properties.maxPayloadBytes()).isEqualTo(262144);
        assertThat(properties.maxRequestBytes()).isEqualTo(16777216);
        assertThat(properties.http().allowedHosts()).isEmpty();
        assertThat(properties.listenUrl()).isNull();
        assertThat(properties.taskTimeout()).isEqualTo(Duration.ofHours(2));
        assertThat(properties.database().statementTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(properties.database().workerPoolSize()).isEqualTo(6);
        assertThat(properties.sse().maxSubscribers()).isEqualTo(10_000);
        assertThat(properties.api().requestTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void everyEnvironmentVariableOfTheContractBinds() {
        TasklaneProperties properties = bind(Map.ofEntries(
                Map.entry("TASKLANE_API_TOKENS", "alpha, beta"),
                Map.entry("TASKLANE_WORKER_QUEUES", "default:4,emails:2"),
                Map.entry("TASKLANE_WORKER_LEASE", "45s"),
                Map.entry("TASKLANE_RESCUE_INTERVAL", "2s"),
                Map.entry("TASKLANE_RETRY_BASE_DELAY", "250ms"),
                Map.entry("TASKLANE_RETRY_MAX_DELAY", "10m"),
                Map.entry("TASKLANE_RETENTION", "3d"),
                Map.entry("TASKLANE_MAX_PAYLOAD_BYTES", "1024"),
                Map.entry("TASKLANE_MAX_REQUEST_BYTES", "2048"),
                Map.entry("TASKLANE_HTTP_ALLOWED_HOSTS", "10.0.0.0/8,internal.example"),
                Map.entry("TASKLANE_LISTEN_URL", "r2dbc:postgresql://db:5432/tasklane"),
                Map.entry("TASKLANE_TASK_TIMEOUT", "90m"),
                Map.entry("TASKLANE_DATABASE_STATEMENT_TIMEOUT", "5s"),
                Map.entry("TASKLANE_DATABASE_WORKER_POOL_SIZE", "3"),
                Map.entry("TASKLANE_SSE_MAX_SUBSCRIBERS", "500"),
                Map.entry("TASKLANE_API_REQUEST_TIMEOUT", "10s"),
                Map.entry("TASKLANE_QUEUES", "{\"emails\": {\"maxRunning\": 2}}")));
        assertThat(properties.api().tokens()).containsExactly("alpha", "beta");
        assertThat(properties.worker().queues()).containsExactly("default:4", "emails:2");
        assertThat(properties.worker().lease()).isEqualTo(Duration.ofSeconds(45));
        assertThat(properties.rescueInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(properties.retry().baseDelay()).isEqualTo(Duration.ofMillis(250));
        assertThat(properties.retry().maxDelay()).isEqualTo(Duration.ofMinutes(10));
        assertThat(properties.retention()).isEqualTo(Duration.ofDays(3));
        assertThat(properties.maxPayloadBytes()).isEqualTo(1024);
        assertThat(properties.maxRequestBytes()).isEqualTo(2048);
        assertThat(properties.http().allowedHosts()).containsExactly("10.0.0.0/8", "internal.example");
        assertThat(properties.listenUrl()).isEqualTo("r2dbc:postgresql://db:5432/tasklane");
        assertThat(properties.taskTimeout()).isEqualTo(Duration.ofMinutes(90));
        assertThat(properties.database().statementTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(properties.database().workerPoolSize()).isEqualTo(3);
        assertThat(properties.sse().maxSubscribers()).isEqualTo(500);
        assertThat(properties.api().requestTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(properties.queues()).isEqualTo("{\"emails\": {\"maxRunning\": 2}}");
    }

    @Test
    void aTaskTimeoutOutsideOneSecondToSevenDaysStopsTheStart() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> bind(Map.of("TASKLANE_TASK_TIMEOUT", "8d")))
                .hasStackTraceContaining("TASKLANE_TASK_TIMEOUT");
    }

    @Test
    void anEmptyQueueListMeansNoInProcessWork() {
        assertThat(bind(Map.of("TASKLANE_WORKER_QUEUES", "")).worker().queues()).isEmpty();
    }

    @Test
    void tokensAreNotPrinted() {
        assertThat(bind(Map.of("TASKLANE_API_TOKENS", "very-secret")).toString()).doesNotContain("very-secret");
    }

    private static TasklaneProperties bind(Map<String, Object> environment) {
        StandardEnvironment env = new StandardEnvironment();
        MutablePropertySources sources = env.getPropertySources();
        sources.remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        sources.remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        sources.addFirst(new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, environment));
        return new Binder(ConfigurationPropertySources.from(sources))
                .bindOrCreate("tasklane", TasklaneProperties.class);
    }
}
