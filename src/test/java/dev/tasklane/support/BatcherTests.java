package dev.tasklane.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

final class BatcherTests {

    private final List<List<Integer>> flushed = new CopyOnWriteArrayList<>();
    private final Sinks.Empty<Void> firstFlushMayEnd = Sinks.empty();

    /** Answers each item with ten times itself; the first flush ends only when the test says so. */
    private final Batcher<Integer, Integer> batcher = new Batcher<>("test", 100, 1, items -> {
        boolean first = flushed.isEmpty();
        flushed.add(items);
        Mono<List<Integer>> results = Mono.just(items.stream().map(i -> i * 10).toList());
        return first ? firstFlushMayEnd.asMono().then(results) : results;
    });

    @Test
    void anItemOnAQuietBatcherIsFlushedAtOnce() {
        firstFlushMayEnd.tryEmitEmpty();
        StepVerifier.create(batcher.submit(7)).expectNext(70).verifyComplete();
        assertThat(flushed).containsExactly(List.of(7));
    }

    @Test
    void itemsSubmittedDuringAFlushShareTheNextOneAndEachGetsItsOwnResult() {
        Mono<Integer> first = batcher.submit(1).cache();
        first.subscribe();
        List<Mono<Integer>> waiting = List.of(2, 3, 4, 5).stream().map(i -> batcher.submit(i).cache()).toList();
        waiting.forEach(Mono::subscribe);
        assertThat(flushed).containsExactly(List.of(1));

        firstFlushMayEnd.tryEmitEmpty();

        StepVerifier.create(Flux.concat(first, Flux.concat(waiting))).expectNext(10, 20, 30, 40, 50)
                .verifyComplete();
        assertThat(flushed).containsExactly(List.of(1), List.of(2, 3, 4, 5));
    }

    @Test
    void aFlushThatAnswersTheWrongNumberOfResultsFailsItsSubmitters() {
        Batcher<Integer, Integer> broken = new Batcher<>("broken", 100, 1, items -> Mono.just(List.of()));
        StepVerifier.create(broken.submit(1)).expectErrorMessage("broken: 0 results for a batch of 1")
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aWriteWithoutResultsCompletesItsSubmittersEmpty() {
        List<String> written = new CopyOnWriteArrayList<>();
        Batcher<String, Void> writes = Batcher.ofWrites("writes", 10, 1, items -> Mono.fromRunnable(() -> written.addAll(items)));
        StepVerifier.create(writes.submit("a")).verifyComplete();
        assertThat(written).containsExactly("a");
    }
}
