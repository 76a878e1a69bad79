package dev.tasklane.bench;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/** The benchmark at toy sizes, in the normal test run, so that the harness cannot rot unnoticed. */
final class BenchmarkSmokeTests {

    @Test
    @Timeout(300)
    void theHarnessMeasuresEveryFigureAndWritesItsReport() throws Exception {
        Path out = Path.of("target", "bench-smoke");
        Benchmark.Results results = Benchmark.run(Sizes.smoke(), out);

        assertThat(results.figures()).extracting(Benchmark.Figure::name).anyMatch(n -> n.startsWith("bulk enqueue"))
                .anyMatch(n -> n.startsWith("burn-down, one replica")).anyMatch(n -> n.startsWith("burn-down, two"))
                .anyMatch(n -> n.startsWith("single enqueue")).anyMatch(n -> n.startsWith("idle pickup"))
                .anyMatch(n -> n.startsWith("SSE delivery")).anyMatch(n -> n.startsWith("idle SSE subscribers"))
                .anyMatch(n -> n.startsWith("claim cost"));
        assertThat(results.figures()).allSatisfy(f -> assertThat(f.value()).as(f.name()).isPositive().isFinite());
        assertThat(results.figures()).filteredOn(f -> f.unit().equals("tasks/s") && !f.name().startsWith("burn-down, two"))
                .allSatisfy(f -> assertThat(f.ratio()).as(f.name()).isNotNull().isPositive());
        assertThat(out.resolve("results.json")).content().contains("\"figures\"");
        assertThat(out.resolve("chart.svg")).content().startsWith("<svg").contains("</svg>");
        assertThat(out.resolve("results.txt")).content().contains("burn-down");
    }
}
