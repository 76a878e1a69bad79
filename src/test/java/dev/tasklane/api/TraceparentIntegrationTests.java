package dev.tasklane.api;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The enqueue's {@code traceparent} is kept with its tasks whether or not tracing is on; an
 * invalid one is ignored, never refused. Tracing itself is off without an OTLP endpoint.
 */
final class TraceparentIntegrationTests extends IntegrationTest {

    private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    @Autowired
    private ApplicationContext context;

    @Test
    void aSingleAndABatchEnqueueKeepTheRequestsTraceparent() {
        String queue = TaskFixtures.uniqueQueue("traceparent");
        JsonNode single = enqueue("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\"}", TRACEPARENT, 201);
        assertThat(single.get("traceparent").stringValue()).isEqualTo(TRACEPARENT);
        JsonNode batch = enqueue("/api/v1/queues/" + queue + "/tasks/batch",
                "{\"tasks\": [{\"type\": \"t\"}, {\"type\": \"t\"}]}", TRACEPARENT, 201);
        assertThat(batch.get("tasks")).allSatisfy(task -> assertThat(task.get("traceparent").stringValue()).isEqualTo(TRACEPARENT));
        JsonNode read = api().get().uri("/api/v1/tasks/{id}", single.get("id").longValue()).exchange()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(read.get("traceparent").stringValue()).isEqualTo(TRACEPARENT);
    }

    @Test
    void anInvalidOrMissingTraceparentIsIgnoredAndTheTaskStillMade() {
        String queue = TaskFixtures.uniqueQueue("traceparent-bad");
        for (String bad : new String[] {"nonsense", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"}) {
            assertThat(enqueue("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\"}", bad, 201).get("traceparent").isNull())
                    .as(bad).isTrue();
        }
        assertThat(enqueue("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\"}", null, 201).get("traceparent").isNull())
                .isTrue();
    }

    @Test
    void aLaterVersionIsKeptAsTheVersion00HeaderItReadsAs() {
        String queue = TaskFixtures.uniqueQueue("traceparent-v1");
        JsonNode task = enqueue("/api/v1/queues/" + queue + "/tasks", "{\"type\": \"t\"}",
                "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later-fields", 201);
        assertThat(task.get("traceparent").stringValue()).isEqualTo(TRACEPARENT);
    }

    @Test
    void withoutAnOtlpEndpointNothingIsTraced() {
        assertThat(context.getEnvironment().getProperty("management.tracing.export.enabled")).isEqualTo("false");
        assertThat(context.getBeansOfType(io.micrometer.tracing.Tracer.class).values())
                .allSatisfy(tracer -> assertThat(tracer).isSameAs(io.micrometer.tracing.Tracer.NOOP));
    }

    private JsonNode enqueue(String uri, String json, String traceparent, int status) {
        return api().post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                .headers(headers -> {
                    if (traceparent != null) {
                        headers.set("traceparent", traceparent);
                    }
                })
                .bodyValue(json).exchange().expectStatus().isEqualTo(status)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }
}
