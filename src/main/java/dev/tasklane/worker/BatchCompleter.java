package dev.tasklane.worker;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import dev.tasklane.queue.Outcome;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.support.Batcher;
import dev.tasklane.support.StorableText;
import io.r2dbc.spi.R2dbcException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Writes the outcomes of in-process attempts, many to a statement (river's BatchCompleter), so
 * that no outcome is lost for another's sake.
 *
 * <ul>
 *   <li>A batch that the database refuses for what it holds (a value it cannot store, any data
 *       or integrity error) is split in halves until the row that fails stands alone; that
 *       attempt then ends {@code failed} with an error saying why, and every other row is written.
 *   <li>A batch that fails for the connection's sake (the database away, a timeout, a deadlock)
 *       fails its submitters, which submit again after a backoff, together with whatever else is
 *       waiting. They keep trying for as long as their attempt keeps its lease: its handler is done
 *       but it stays tracked, so its lease is renewed meanwhile.
 * </ul>
 * Writing an outcome twice is harmless: the second finds the lease gone and changes nothing.
 */
final class BatchCompleter {

    private static final Logger log = LoggerFactory.getLogger(BatchCompleter.class);
    private static final int MAX_BATCH = 500;
    private static final int FLUSHES_IN_FLIGHT = 2;
    private static final Duration FIRST_RETRY = Duration.ofMillis(100);
    private static final Duration LAST_RETRY = Duration.ofSeconds(2);
    /** SQLSTATE classes that say the statement's data was refused, not the connection. */
    private static final Set<String> DATA_ERRORS = Set.of("22", "23", "42", "54", "0A");

    private final TaskStore store;
    private final Batcher<Outcome, Void> batcher;

    BatchCompleter(TaskStore store) {
        this.store = store;
        this.batcher = Batcher.ofWrites("complete", MAX_BATCH, FLUSHES_IN_FLIGHT, this::write);
    }

    /**
     * Completes once the outcome is written (or found to apply no more); retries transient
     * failures until cancelled. Cancel it when the attempt's lease is gone.
     */
    Mono<Void> submit(Outcome outcome) {
        return Mono.defer(() -> batcher.submit(outcome))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, FIRST_RETRY).maxBackoff(LAST_RETRY)
                        .filter(failure -> !refusedData(failure)));
    }

    private Mono<Void> write(List<Outcome> outcomes) {
        return store.complete(outcomes).then()
                .onErrorResume(BatchCompleter::refusedData, refused -> {
                    if (outcomes.size() > 1) {
                        int half = outcomes.size() / 2;
                        return write(outcomes.subList(0, half)).then(write(outcomes.subList(half, outcomes.size())));
                    }
                    return writeUnstorable(outcomes.get(0), refused);
                });
    }

    /** The one outcome the database refused: the attempt fails, counted once, with the reason. */
    private Mono<Void> writeUnstorable(Outcome outcome, Throwable refused) {
        String why = StorableText.sanitize("the outcome could not be stored: " + refused.getMessage(), 1000);
        log.warn("Outcome of task {} refused by the database; failing the task: {}", outcome.taskId(), why);
        return store.complete(List.of(outcome.asUnstorable(why))).then()
                .onErrorResume(BatchCompleter::refusedData, again -> {
                    log.warn("Could not record the failure of task {} either; its lease will expire: {}",
                            outcome.taskId(), again.toString());
                    return Mono.empty();
                });
    }

    /** Whether the database refused the data (as opposed to the connection failing). */
    static boolean refusedData(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof R2dbcException r2dbc && r2dbc.getSqlState() != null
                    && r2dbc.getSqlState().length() >= 2) {
                return DATA_ERRORS.contains(r2dbc.getSqlState().substring(0, 2));
            }
        }
        return false;
    }
}
