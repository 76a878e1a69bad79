package dev.tasklane.testsupport;

import java.time.Duration;

import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

/**
 * The shared context of the tests that need in-process workers: a handful of queues of its own
 * (no other test enqueues there), short leases and backoff so that retries and rescues happen in
 * test time, a 10 s safety poll so that a pickup within a second proves the wake-up path, and the
 * misbehaving handlers of {@link TestHandlers}.
 */
@Import(TestHandlers.class)
@TestPropertySource(properties = {
        "tasklane.worker.queues=wk-basic:8,wk-order:1,wk-retry:4,wk-pause:4,wk-cancel:4,wk-pickup:2,wk-rescue:4,"
                + "wk-http:4,wk-timeout:4,wk-due:2,wk-flow:4",
        "tasklane.http.allowed-hosts=127.0.0.1",
        "tasklane.worker.lease=2s",
        "tasklane.worker.poll-interval=10s",
        "tasklane.retry.base-delay=200ms",
        "tasklane.retry.max-delay=1s",
        "tasklane.rescue-interval=500ms",
        "tasklane.maintenance.enabled=true"
})
public abstract class WorkerIntegrationTest extends IntegrationTest {

    protected static final Duration PATIENCE = Duration.ofSeconds(20);
}
