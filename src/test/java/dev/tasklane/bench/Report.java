package dev.tasklane.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** Writes the results as JSON, as a table, and as a chart (SVG, no library needed). */
final class Report {

    private Report() {
    }

    static void write(Benchmark.Results results, Path out) throws IOException {
        Files.createDirectories(out);
        JsonMapper json = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
        Files.writeString(out.resolve("results.json"), json.writeValueAsString(results));
        String table = table(results);
        Files.writeString(out.resolve("results.txt"), table);
        Files.writeString(out.resolve("chart.svg"), chart(results));
        System.out.println(table);
    }

    static String table(Benchmark.Results results) {
        StringBuilder text = new StringBuilder();
        text.append("tasklane benchmark, ").append(results.date()).append(", ").append(results.machine()).append('\n');
        text.append(String.format(Locale.ROOT, "%-72s %14s %-9s %14s %7s %-10s %s%n", "figure", "value", "unit",
                "ceiling", "ratio", "target", "note"));
        for (Benchmark.Figure f : results.figures()) {
            text.append(String.format(Locale.ROOT, "%-72s %14s %-9s %14s %7s %-10s %s%n", f.name(), number(f.value()),
                    f.unit(), f.ceiling() == null ? "" : number(f.ceiling()),
                    f.ratio() == null ? "" : String.format(Locale.ROOT, "%.2f", f.ratio()),
                    f.target() == null ? "" : f.target(), f.note() == null ? "" : f.note()));
        }
        return text.toString();
    }

    private static String number(double value) {
        return Math.abs(value) >= 100 ? String.format(Locale.ROOT, "%,.0f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

    /** Throughput beside its ceiling, and the latencies, as horizontal bars. */
    static String chart(Benchmark.Results results) {
        List<Benchmark.Figure> rates = results.figures().stream().filter(f -> f.unit().equals("tasks/s")).toList();
        List<Benchmark.Figure> latencies = results.figures().stream().filter(f -> f.unit().equals("ms")).toList();
        int width = 900;
        int labelWidth = 360;
        int barWidth = width - labelWidth - 120;
        int row = 22;
        int height = 60 + rates.size() * row * 2 + 50 + latencies.size() * row + 30;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                + " font-family=\"sans-serif\" font-size=\"12\">%n", width, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(text(10, 20, "tasklane benchmark " + results.date() + " — " + results.machine(), "bold"));
        svg.append(text(10, 44, "throughput (tasks/s): service (blue) and its bare statements (grey)", "bold"));
        double maxRate = rates.stream().mapToDouble(f -> Math.max(f.value(), f.ceiling() == null ? 0 : f.ceiling()))
                .max().orElse(1);
        int y = 56;
        for (Benchmark.Figure f : rates) {
            svg.append(text(10, y + 14, f.name(), "normal"));
            svg.append(bar(labelWidth, y, f.value() / maxRate * barWidth, "#2457c5", number(f.value())));
            if (f.ceiling() != null) {
                svg.append(bar(labelWidth, y + row - 4, f.ceiling() / maxRate * barWidth, "#9aa5b1",
                        number(f.ceiling())));
            }
            y += row * 2;
        }
        y += 20;
        svg.append(text(10, y, "latency (ms)", "bold"));
        y += 12;
        double maxLatency = latencies.stream().mapToDouble(Benchmark.Figure::value).filter(v -> !Double.isNaN(v))
                .max().orElse(1);
        for (Benchmark.Figure f : latencies) {
            svg.append(text(10, y + 14, f.name(), "normal"));
            double value = Double.isNaN(f.value()) ? 0 : f.value();
            svg.append(bar(labelWidth, y, value / maxLatency * barWidth, "#1b7f4a", number(f.value())));
            y += row;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String bar(int x, int y, double length, String colour, String label) {
        return String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>%n", x, y,
                Math.max(1, length), colour) + text((int) (x + Math.max(1, length) + 6), y + 13, label, "normal");
    }

    private static String text(int x, int y, String content, String weight) {
        String escaped = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        return String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"%s\">%s</text>%n", x, y, weight,
                escaped);
    }
}
