package dev.tasklane.queue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.r2dbc.spi.ColumnMetadata;
import io.r2dbc.spi.Readable;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import org.jspecify.annotations.Nullable;

/**
 * Where the columns of {@code task} sit in a result's rows, found by name once per result. Read by
 * name, the driver lower-cases the name and looks it up in a map on every get: for the thousand
 * rows of a claim or of a batch enqueue, 29 columns each, that was 5–7 % of the replica's CPU.
 * Every row of a result carries the same metadata object, so the positions found for the last
 * result are kept for its next rows. Results read at once on two event loops (a claim's and an
 * outcome statement's) take turns in that one slot; finding a result's positions is one map
 * lookup per column, about what reading one row by name cost, so such turns cost no more than
 * reading by name did.
 */
final class TaskColumns {

    static final int ID = 0;
    static final int QUEUE = 1;
    static final int TYPE = 2;
    static final int PAYLOAD = 3;
    static final int STATE = 4;
    static final int PRIORITY = 5;
    static final int ATTEMPT = 6;
    static final int MAX_ATTEMPTS = 7;
    static final int RUN_AT = 8;
    static final int CREATED_AT = 9;
    static final int STARTED_AT = 10;
    static final int FINISHED_AT = 11;
    static final int WORKER_ID = 12;
    static final int LEASE_ID = 13;
    static final int LEASE_EXPIRES_AT = 14;
    static final int TIMEOUT_SECONDS = 15;
    static final int TIMEOUT_AT = 16;
    static final int PROGRESS_PERCENT = 17;
    static final int PROGRESS_MESSAGE = 18;
    static final int RESULT = 19;
    static final int LAST_ERROR = 20;
    static final int IDEMPOTENCY_KEY = 21;
    static final int CONCURRENCY_KEY = 22;
    static final int SNOOZES = 23;
    static final int MAX_SNOOZES = 24;
    static final int UNIQUE_KEY = 25;
    static final int SCHEDULE = 26;
    static final int SCHEDULED_FOR = 27;
    static final int TRACEPARENT = 28;

    /** The column names, at the positions of the constants above. */
    private static final List<String> NAMES = List.of("id", "queue", "type", "payload", "state", "priority",
            "attempt", "max_attempts", "run_at", "created_at", "started_at", "finished_at", "worker_id", "lease_id",
            "lease_expires_at", "timeout_seconds", "timeout_at", "progress_percent", "progress_message", "result",
            "last_error", "idempotency_key", "concurrency_key", "snoozes", "max_snoozes", "unique_key", "schedule",
            "scheduled_for", "traceparent");

    /** Each name's constant, for finding a result's positions with one lookup per column. */
    private static final Map<String, Integer> CONSTANTS = IntStream.range(0, NAMES.size()).boxed()
            .collect(Collectors.toUnmodifiableMap(NAMES::get, Function.identity()));

    private record Positions(RowMetadata metadata, int[] at) {
    }

    private static volatile @Nullable Positions last;

    private TaskColumns() {
    }

    /**
     * Each column's index in {@code row}, by the constants above (the first column of a name, as
     * the driver's lookup by name takes). Not to be modified.
     */
    static int[] of(Readable row) {
        if (!(row instanceof Row withMetadata)) {
            throw new IllegalArgumentException("a task is read from a result row, not from " + row.getClass());
        }
        RowMetadata metadata = withMetadata.getMetadata();
        Positions known = last;
        if (known != null && known.metadata() == metadata) {
            return known.at();
        }
        int[] at = new int[NAMES.size()];
        Arrays.fill(at, -1);
        List<? extends ColumnMetadata> columns = metadata.getColumnMetadatas();
        for (int i = 0; i < columns.size(); i++) {
            Integer column = CONSTANTS.get(columns.get(i).getName());
            if (column != null && at[column] < 0) {
                at[column] = i;
            }
        }
        for (int column = 0; column < at.length; column++) {
            if (at[column] < 0) {
                throw new NoSuchElementException("the result has no column " + NAMES.get(column));
            }
        }
        last = new Positions(metadata, at);
        return at;
    }
}
