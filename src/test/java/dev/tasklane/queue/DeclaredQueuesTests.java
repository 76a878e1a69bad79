package dev.tasklane.queue;

import java.util.Map;

import dev.tasklane.queue.FlowLimits.Fairness;
import dev.tasklane.queue.FlowLimits.Rate;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** TASKLANE_QUEUES as an operator writes it, and the messages that stop a start when it is wrong. */
final class DeclaredQueuesTests {

    @Test
    void aDocumentDeclaresEachQueuesWholeFlowControl() {
        Map<String, FlowLimits> declared = DeclaredQueues.parse("""
                {"emails": {"rate": {"count": 100, "periodSeconds": 60}, "fairness": "round-robin"},
                 "reports": {"maxRunning": 4, "maxRunningPerKey": 1},
                 "plain": {}}
                """);
        assertThat(declared).containsOnly(
                Map.entry("emails", new FlowLimits(null, null, new Rate(100, 60), null, Fairness.ROUND_ROBIN)),
                Map.entry("reports", new FlowLimits(4, 1, null, null, Fairness.FIFO)),
                Map.entry("plain", FlowLimits.NONE));
        assertThat(DeclaredQueues.parse(null)).isEmpty();
        assertThat(DeclaredQueues.parse("  ")).isEmpty();
    }

    @Test
    void anInvalidDocumentStopsTheStartNamingEveryBadField() {
        assertThatThrownBy(() -> DeclaredQueues.parse("""
                {"emails": {"maxRunning": 0, "rate": {"count": 5}},
                 "bad name": {},
                 "reports": {"fairness": "lifo", "limit": 3}}
                """))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("TASKLANE_QUEUES")
                .hasMessageContaining("emails.maxRunning")
                .hasMessageContaining("emails.rate.periodSeconds")
                .hasMessageContaining("bad name")
                .hasMessageContaining("reports.fairness")
                .hasMessageContaining("reports.limit");
        assertThatThrownBy(() -> DeclaredQueues.parse("{\"emails\": {\"maxRunning\": \"4\"}}"))
                .hasMessageContaining("emails.maxRunning");
        assertThatThrownBy(() -> DeclaredQueues.parse("{\"emails\": ")).hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> DeclaredQueues.parse("[]")).hasMessageContaining("must be a JSON object");
        assertThatThrownBy(() -> DeclaredQueues.parse("{\"emails\": 4}")).hasMessageContaining("emails");
    }
}
