package dev.tasklane.events;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

final class SseFramesTests {

    private final JsonMapper json = JsonMapper.builder().build();

    @Test
    void anEventsFrameCarriesItsIdNameAndTheContractsDataWithItsDetail() {
        TaskEvent event = new TaskEvent(1234, 42, "default", "sleep", "tenant \"7\"", null, null, "progress", "running", 1,
                Instant.parse("2026-12-02T10:00:00.123456Z"), "{\"message\": \"step 4/10\", \"percent\": 40}");
        String frame = new String(SseFrames.of(event), StandardCharsets.UTF_8);
        String[] lines = frame.split("\n");
        assertThat(lines[0]).isEqualTo("id: 1234");
        assertThat(lines[1]).isEqualTo("event: progress");
        assertThat(frame).endsWith("\n\n");
        JsonNode data = json.readTree(lines[2].substring("data: ".length()));
        assertThat(data.get("eventId").longValue()).isEqualTo(1234);
        assertThat(data.get("taskId").longValue()).isEqualTo(42);
        assertThat(data.get("queue").stringValue()).isEqualTo("default");
        assertThat(data.get("type").stringValue()).isEqualTo("sleep");
        assertThat(data.get("concurrencyKey").stringValue()).isEqualTo("tenant \"7\"");
        assertThat(data.get("state").stringValue()).isEqualTo("running");
        assertThat(data.get("attempt").intValue()).isEqualTo(1);
        assertThat(data.get("at").stringValue()).isEqualTo("2026-12-02T10:00:00.123456Z");
        assertThat(data.get("percent").intValue()).isEqualTo(40);
        assertThat(data.get("message").stringValue()).isEqualTo("step 4/10");
    }

    @Test
    void anEventWithoutDetailAndAGapAreValidFrames() {
        TaskEvent cancelled = new TaskEvent(9, 3, "q", "t", null, null, null, "cancelled", "cancelled", 0, Instant.EPOCH, "{}");
        String frame = new String(SseFrames.of(cancelled), StandardCharsets.UTF_8);
        JsonNode data = json.readTree(frame.split("\n")[2].substring(6));
        assertThat(data.size()).isEqualTo(8);
        assertThat(data.get("concurrencyKey").isNull()).isTrue();
        assertThat(new String(SseFrames.gap(77), StandardCharsets.UTF_8))
                .isEqualTo("event: gap\ndata: {\"prunedThrough\":77}\n\n");
    }
}
