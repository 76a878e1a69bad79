package dev.tasklane.flow;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An in-process pipeline on a flow-controlled queue (its safety poll is 10 s here, so anything
 * faster is a wake-up): held back by a limit, it takes the next task as soon as a slot frees.
 */
final class FlowPipelineIntegrationTests extends WorkerIntegrationTest {

    @Test
    void aPipelineHeldBackByMaxRunningStartsTheNextTaskWhenTheSlotFrees() {
        Tasks tasks = new Tasks(api());
        api().patch().uri("/api/v1/queues/wk-flow").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"maxRunning\": 1}").exchange().expectStatus().isOk().expectBody().returnResult();
        List<Long> ids = IntStream.range(0, 3).mapToObj(i -> tasks.enqueue("wk-flow",
                "{\"type\": \"sleep\", \"payload\": {\"durationMs\": 300}}").get("id").longValue()).toList();
        List<JsonNode> done = ids.stream().map(id -> tasks.awaitState(id, "succeeded", PATIENCE)).toList();
        List<JsonNode> byStart = done.stream()
                .sorted((a, b) -> Tasks.time(a, "startedAt").compareTo(Tasks.time(b, "startedAt"))).toList();
        for (int i = 1; i < byStart.size(); i++) {
            Instant previousFinished = Tasks.time(byStart.get(i - 1), "finishedAt");
            Instant started = Tasks.time(byStart.get(i), "startedAt");
            assertThat(started).as("one at a time").isAfterOrEqualTo(previousFinished);
            assertThat(Duration.between(previousFinished, started)).as("woken by the freed slot, not the poll")
                    .isLessThan(Duration.ofSeconds(1));
        }
    }
}
