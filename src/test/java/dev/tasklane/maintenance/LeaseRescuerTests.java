package dev.tasklane.maintenance;

import java.time.Duration;
import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.Task;
import dev.tasklane.queue.TaskStore;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

/** A round of lease rescue, with the database replaced by answers. */
class LeaseRescuerTests {

    @Test
    void aFailedSweepOfStrayRunningRowsFailsNeitherTheRescueNorItsCount() {
        TaskStore store = mock(TaskStore.class);
        when(store.onWorkerPool()).thenReturn(store);
        when(store.rescueExpired(anyInt())).thenReturn(Flux.fromIterable(List.of(mock(Task.class), mock(Task.class))));
        when(store.forgetStrayRows()).thenReturn(Mono.error(new IllegalStateException("connection lost")));
        TasklaneProperties properties = mock(TasklaneProperties.class);
        when(properties.rescueInterval()).thenReturn(Duration.ofSeconds(5));

        Long rescued = new LeaseRescuer(store, properties).rescueAll().block(Duration.ofSeconds(5));

        assertThat(rescued).isEqualTo(2L);
        verify(store).forgetStrayRows();
    }
}
