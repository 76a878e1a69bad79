package dev.tasklane.bench;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The full benchmark, run only by {@code ./mvnw -Pbench verify} (it is not a test and takes a
 * few minutes): every figure of the performance issue, written to {@code target/bench/}.
 */
final class TasklaneBenchmark {

    @Test
    @Timeout(1800)
    void measure() throws Exception {
        Benchmark.Results results = Benchmark.run(Sizes.full(), Path.of("target", "bench"));
        assertThat(results.figures()).isNotEmpty();
    }
}
