package dev.tasklane.config;

import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

import io.r2dbc.spi.R2dbcTimeoutException;
import io.r2dbc.spi.Readable;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * A statement's result whose rows and counts are timed too: the driver hands out the result
 * before the server has answered with any row, so timing only the result would let a statement
 * that waits on a lock, or a server that stops answering half-way, hang its caller for good.
 */
record TimedResult(Result result, Duration timeout) implements Result {

    /** Times every signal of a statement's results: none may be more than {@code timeout} apart. */
    static Flux<Result> timed(Publisher<? extends Result> results, Duration timeout) {
        return bounded(Flux.from(results), timeout).map(result -> new TimedResult(result, timeout));
    }

    private static <T> Flux<T> bounded(Flux<T> signals, Duration timeout) {
        return signals.timeout(timeout, Flux.error(() -> new R2dbcTimeoutException(
                "no answer from the database within " + timeout.toMillis() + " ms")));
    }

    @Override
    public Publisher<Long> getRowsUpdated() {
        return bounded(Flux.from(result.getRowsUpdated()), timeout);
    }

    @Override
    public <T> Publisher<T> map(BiFunction<Row, RowMetadata, ? extends T> mapping) {
        return bounded(Flux.from(result.map(mapping)), timeout);
    }

    @Override
    public <T> Publisher<T> map(Function<? super Readable, ? extends T> mapping) {
        return bounded(Flux.from(result.map(mapping)), timeout);
    }

    @Override
    public Result filter(Predicate<Segment> filter) {
        return new TimedResult(result.filter(filter), timeout);
    }

    @Override
    public <T> Publisher<T> flatMap(Function<Segment, ? extends Publisher<? extends T>> mapping) {
        return bounded(Flux.from(result.flatMap(mapping)), timeout);
    }
}
