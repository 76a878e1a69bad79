package dev.tasklane.config;

import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

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
 *
 * @param noAnswer what a timeout becomes: it stops the statement, then fails
 */
record TimedResult(Result result, Duration timeout, Supplier<Mono<Void>> noAnswer) implements Result {

    /** Times the statement's results, and the first row or count of each. */
    static Flux<Result> timed(Publisher<? extends Result> results, Duration timeout, Supplier<Mono<Void>> noAnswer) {
        return Flux.<Result>from(results).timeout(Mono.delay(timeout), result -> Mono.never(), stopped(noAnswer))
                .map(result -> new TimedResult(result, timeout, noAnswer));
    }

    // The first signal only: one timer per answer, not one per row, which a claim of hundreds of
    // rows would pay for. Once rows flow, the server has answered.
    private <T> Flux<T> bounded(Flux<T> signals) {
        return signals.timeout(Mono.delay(timeout), item -> Mono.never(), stopped(noAnswer));
    }

    private static <T> Flux<T> stopped(Supplier<Mono<Void>> noAnswer) {
        return Mono.defer(noAnswer).thenMany(Flux.empty());
    }

    @Override
    public Publisher<Long> getRowsUpdated() {
        return bounded(Flux.from(result.getRowsUpdated()));
    }

    @Override
    public <T> Publisher<T> map(BiFunction<Row, RowMetadata, ? extends T> mapping) {
        return bounded(Flux.from(result.map(mapping)));
    }

    @Override
    public <T> Publisher<T> map(Function<? super Readable, ? extends T> mapping) {
        return bounded(Flux.from(result.map(mapping)));
    }

    @Override
    public Result filter(Predicate<Segment> filter) {
        return new TimedResult(result.filter(filter), timeout, noAnswer);
    }

    @Override
    public <T> Publisher<T> flatMap(Function<Segment, ? extends Publisher<? extends T>> mapping) {
        return bounded(Flux.from(result.flatMap(mapping)));
    }
}
