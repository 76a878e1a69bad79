package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A statement's events of one queue are one batch, which holds at most 4,096 (V022): what could
 * change more tasks of a queue at once goes in statements of at most that many.
 */
final class EventBatchBoundsIntegrationTests extends IntegrationTest {

    @Autowired
    private TaskStore store;

    @Test
    void releasingMoreLeasesThanOneBatchHoldsReleasesThemAllInSeveralStatements() {
        String queue = TaskFixtures.uniqueQueue("release-many");
        Sql.update("INSERT INTO task (queue, type, state, attempt, worker_id, lease_id, started_at, lease_expires_at,"
                + " timeout_at) SELECT ?, 'noop', 'running', 1, 'w', gen_random_uuid(), now(),"
                + " now() + interval '1 hour', now() + interval '2 hours' FROM generate_series(1, 5000)", queue);
        TaskRows.followQueue(queue);
        List<LeaseKey> leases = Sql.column("SELECT id || ' ' || lease_id FROM task WHERE queue = ? ORDER BY id", queue)
                .stream().map(row -> row.split(" "))
                .map(parts -> new LeaseKey(Long.parseLong(parts[0]), UUID.fromString(parts[1]))).toList();

        List<Task> released = store.releaseLeases(leases, "released: a test").collectList().block(Duration.ofSeconds(30));

        assertThat(released).hasSize(5000);
        assertThat(Sql.column("SELECT count(*) FROM task WHERE queue = ? AND state = 'queued'", queue)).containsExactly("5000");
        assertThat(Sql.column("SELECT size FROM task_event_batch WHERE queue = ? ORDER BY first_id", queue))
                .containsExactly("4096", "904");
    }

    @Test
    void aClaimTakesAtMostOneBatchOfTasks() {
        assertThatThrownBy(() -> new Claim("q", "w", Claim.MAX_LIMIT + 1, Duration.ofSeconds(30), Set.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new Claim("q", "w", Claim.MAX_LIMIT, Duration.ofSeconds(30), Set.of()).limit()).isEqualTo(4096);
    }
}
