package dev.tasklane.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;

import io.r2dbc.spi.ColumnMetadata;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Type;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TaskColumnsTests {

    private static final List<String> TASK = List.of("id", "queue", "type", "payload", "state", "priority",
            "attempt", "max_attempts", "run_at", "created_at", "started_at", "finished_at", "worker_id", "lease_id",
            "lease_expires_at", "timeout_seconds", "timeout_at", "progress_percent", "progress_message", "result",
            "last_error", "idempotency_key", "concurrency_key", "snoozes", "max_snoozes", "unique_key", "schedule",
            "scheduled_for", "traceparent");

    @Test
    void positionsFollowTheResultsColumnNamesNotTheTablesOrder() {
        List<String> reversed = new ArrayList<>(TASK);
        Collections.reverse(reversed);
        List<String> columns = new ArrayList<>(List.of("ord"));
        columns.addAll(reversed);
        int[] at = TaskColumns.of(row(columns));
        assertThat(at[TaskColumns.ID]).isEqualTo(columns.indexOf("id"));
        assertThat(at[TaskColumns.TRACEPARENT]).isEqualTo(1);
        assertThat(at[TaskColumns.PAYLOAD]).isEqualTo(columns.indexOf("payload"));
    }

    @Test
    void eachResultGetsItsOwnPositionsAndADuplicateNameTheFirstColumn() {
        int[] tableOrder = TaskColumns.of(row(TASK));
        List<String> joined = new ArrayList<>(TASK);
        joined.add(0, "id");
        int[] withDuplicate = TaskColumns.of(row(joined));
        assertThat(tableOrder[TaskColumns.QUEUE]).isEqualTo(1);
        assertThat(withDuplicate[TaskColumns.ID]).isZero();
        assertThat(withDuplicate[TaskColumns.QUEUE]).isEqualTo(2);
        assertThat(TaskColumns.of(row(TASK))[TaskColumns.QUEUE]).isEqualTo(1);
    }

    @Test
    void aResultWithoutATaskColumnIsRefusedByName() {
        List<String> columns = new ArrayList<>(TASK);
        columns.remove("lease_id");
        assertThatThrownBy(() -> TaskColumns.of(row(columns)))
                .isInstanceOf(NoSuchElementException.class)
                .hasMessageContaining("lease_id");
    }

    /** A row of a result with these columns; only its metadata is read. */
    private static Row row(List<String> names) {
        List<ColumnMetadata> columns = names.stream().map(TaskColumnsTests::column).toList();
        RowMetadata metadata = new RowMetadata() {
            @Override
            public ColumnMetadata getColumnMetadata(int index) {
                return columns.get(index);
            }

            @Override
            public ColumnMetadata getColumnMetadata(String name) {
                return columns.get(names.indexOf(name));
            }

            @Override
            public List<? extends ColumnMetadata> getColumnMetadatas() {
                return columns;
            }

            @Override
            public boolean contains(String columnName) {
                return names.contains(columnName);
            }
        };
        return new Row() {
            @Override
            public RowMetadata getMetadata() {
                return metadata;
            }

            @Override
            public <T> T get(int index, Class<T> type) {
                throw new UnsupportedOperationException();
            }

            @Override
            public <T> T get(String name, Class<T> type) {
                throw new UnsupportedOperationException();
            }
        };
    }

    private static ColumnMetadata column(String name) {
        return new ColumnMetadata() {
            @Override
            public Type getType() {
                throw new UnsupportedOperationException();
            }

            @Override
            public String getName() {
                return name;
            }
        };
    }
}
