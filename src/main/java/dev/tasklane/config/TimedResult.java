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
import reactor.core.publisher.Mono;

/**
 * A statement's result whose rows and counts are timed too: the driver hands out the result
 * before the server has answered with any row, so timing only the result would let a prepared
 * statement that waits on a lock hang its caller for good.
 */
record TimedResult(Result result, Duration timeout) implements Result {

    /** Times the statement's results, and the first row or count of each. */
    static Flux<Result> timed(Publisher<? extends Result> results, Duration timeout) {
        return Flux.from(results).timeout(timeout, noAnswer(timeout)).map(result -> new TimedResult(result, timeout));
    }

    // The first signal only: one timer per answer, not one per row, which a claim of hundreds of
    // rows would pay for. Once rows flow, the server has answered.
    private static <T> Flux<T> bounded(Flux<T> signals, Duration timeout) {
        return signals.timeout(Mono.delay(timeout), item -> Mono.never(), noAnswer(timeout));
    }

    private static <T> Flux<T> noAnswer(Duration timeout) {
        return Flux.error(() -> new R2dbcTimeoutException("no answer from the database within " + timeout.toMillis() + " ms"));
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
