package dev.tasklane.ops;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import dev.tasklane.testsupport.Replicas;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.worker.TaskContext;
import dev.tasklane.worker.TaskHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tracing on, as an operator turns it on (an OTLP endpoint, here Boot's former property name, and
 * a sampling probability): the enqueue's traceparent is kept with the task, its claim and run are
 * spans under it, a handler's own spans are children of the run, pull workers get the
 * traceparent, task log lines carry the trace, and spans really leave over OTLP. Spans are read
 * from an in-memory exporter beside the OTLP one.
 */
@ExtendWith(OutputCaptureExtension.class)
final class TracingIntegrationTests {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT_ID = "00f067aa0ba902b7";
    private static final String TRACEPARENT = "00-" + TRACE_ID + "-" + PARENT_ID + "-01";
    private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    private static final AtomicInteger OTLP_POSTS = new AtomicInteger();

    private static HttpServer collector;
    private static ConfigurableApplicationContext replica;
    private static WebTestClient api;

    @BeforeAll
    static void startTracedReplica() throws IOException {
        collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/v1/traces", exchange -> {
            exchange.getRequestBody().readAllBytes();
            OTLP_POSTS.incrementAndGet();
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        collector.start();
        replica = Replicas.start("traced:4", Map.of(
                "management.otlp.tracing.endpoint", "http://127.0.0.1:" + collector.getAddress().getPort() + "/v1/traces",
                "management.tracing.sampling.probability", "1.0",
                "management.opentelemetry.tracing.export.schedule-delay", "100ms"), SpanCapture.class);
        api = Replicas.client(replica);
    }

    @AfterAll
    static void stop() {
        if (replica != null) {
            replica.close();
        }
        if (collector != null) {
            collector.stop(0);
        }
    }

    @Test
    void aTaskRunsInTheTraceOfItsEnqueueAndAHandlersSpansAreChildrenOfTheRun() {
        long id = enqueue("traced", "{\"type\": \"test.traced\"}").get("id").longValue();
        JsonNode done = new Tasks(api).awaitState(id, "succeeded", PATIENCE);
        assertThat(done.get("traceparent").stringValue()).isEqualTo(TRACEPARENT);

        SpanData run = awaitSpan("run test.traced", id);
        SpanData claim = awaitSpan("claim test.traced", id);
        SpanData work = await().atMost(PATIENCE).until(() -> SPANS.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals("handler work") && span.getTraceId().equals(TRACE_ID))
                .findFirst().orElse(null), span -> span != null);

        assertThat(run.getTraceId()).isEqualTo(TRACE_ID);
        assertThat(run.getParentSpanId()).isEqualTo(PARENT_ID);
        assertThat(claim.getParentSpanId()).isEqualTo(PARENT_ID);
        assertThat(work.getParentSpanId()).isEqualTo(run.getSpanId());
        assertThat(run.getAttributes().asMap().toString()).contains("tasklane.outcome=succeeded", "tasklane.queue=traced");
        await().atMost(PATIENCE).until(() -> OTLP_POSTS.get() > 0);
    }

    @Test
    void aPullWorkerGetsTheTraceparentWithTheTaskItClaims() {
        long id = enqueue("traced-pull", "{\"type\": \"remote\"}").get("id").longValue();
        JsonNode claimed = api.post().uri("/api/v1/queues/traced-pull/claims").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"pw\"}").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(claimed.get("tasks").get(0).get("traceparent").stringValue()).isEqualTo(TRACEPARENT);
        assertThat(awaitSpan("claim remote", id).getParentSpanId()).isEqualTo(PARENT_ID);
    }

    @Test
    void aTasksLogLinesCarryItsTraceAndSpanIds(CapturedOutput output) {
        long id = enqueue("traced", "{\"type\": \"test.traced\", \"maxAttempts\": 1, \"payload\": {\"fail\": true}}")
                .get("id").longValue();
        new Tasks(api).awaitState(id, "failed", PATIENCE);
        await().atMost(PATIENCE).untilAsserted(() -> assertThat(output.getOut().lines()
                .filter(line -> line.contains("Attempt 1 of task " + id + " failed")))
                .singleElement().asString().contains(TRACE_ID, PARENT_ID));
    }

    private static JsonNode enqueue(String queue, String json) {
        return api.post().uri("/api/v1/queues/{q}/tasks", queue).contentType(MediaType.APPLICATION_JSON)
                .header("traceparent", TRACEPARENT).bodyValue(json).exchange().expectStatus().isCreated()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private static SpanData awaitSpan(String name, long taskId) {
        return await().atMost(PATIENCE).until(() -> spans(name, taskId).stream().findFirst().orElse(null), span -> span != null);
    }

    private static List<SpanData> spans(String name, long taskId) {
        return SPANS.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals(name))
                .filter(span -> String.valueOf(taskId).equals(span.getAttributes().asMap().entrySet().stream()
                        .filter(e -> e.getKey().getKey().equals("tasklane.task.id")).map(e -> e.getValue().toString())
                        .findFirst().orElse(null)))
                .toList();
    }

    /** The in-memory exporter beside the OTLP one, and a handler that makes a span of its own. */
    @TestConfiguration(proxyBeanMethods = false)
    static class SpanCapture {

        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return SPANS;
        }

        @Bean
        TaskHandler tracedHandler(ObservationRegistry registry) {
            return new TaskHandler() {
                @Override
                public String type() {
                    return "test.traced";
                }

                @Override
                public Mono<?> handle(TaskContext context) {
                    if (context.payload().path("fail").asBoolean(false)) {
                        return Mono.error(new IllegalStateException("told to fail"));
                    }
                    return Mono.deferContextual(reactorContext -> {
                        Observation work = Observation.createNotStarted("handler.work", registry)
                                .contextualName("handler work")
                                .parentObservation(reactorContext.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
                                .start();
                        return Mono.delay(Duration.ofMillis(20)).doFinally(signal -> work.stop()).thenReturn("traced");
                    });
                }
            };
        }
    }
}
