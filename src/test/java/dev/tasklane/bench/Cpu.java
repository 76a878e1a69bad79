package dev.tasklane.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time used so far by the two replicas, every PostgreSQL process and the benchmark's own
 * JVM (the load generator), in nanoseconds: which of them saturates. The JVMs' from
 * {@code /proc/<pid>/stat} (user + system of all threads, in clock ticks of 1/100 s); PostgreSQL's
 * processes are single-threaded, and their {@code /proc/<pid>/schedstat} counts nanoseconds, so
 * that a short phase's few statements still count.
 *
 * @param replicaA of replica A
 * @param replicaB of replica B
 * @param postgres of all PostgreSQL processes
 * @param driver of the load generator
 */
record Cpu(long replicaA, long replicaB, long postgres, long driver) {

    private static final long NANOS_PER_TICK = 10_000_000L;
    private static final double NANOS_PER_SECOND = 1e9;

    static Cpu sample(long pidA, long pidB) throws IOException {
        long postgres = 0;
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .toList()) {
                String stat = read(process.resolve("stat"));
                if (stat != null && stat.contains("(postgres)")) {
                    postgres += runNanos(read(process.resolve("schedstat")), stat);
                }
            }
        }
        return new Cpu(ticks(read(Path.of("/proc", Long.toString(pidA), "stat"))) * NANOS_PER_TICK,
                ticks(read(Path.of("/proc", Long.toString(pidB), "stat"))) * NANOS_PER_TICK, postgres,
                ticks(read(Path.of("/proc", Long.toString(ProcessHandle.current().pid()), "stat"))) * NANOS_PER_TICK);
    }

    /** PostgreSQL's CPU time per unit of work, in microseconds. */
    double postgresMicrosPer(int units) {
        return postgres / 1e3 / units;
    }

    /** Replica A's CPU time per unit of work, in microseconds. */
    double replicaAMicrosPer(int units) {
        return replicaA / 1e3 / units;
    }

    Cpu minus(Cpu earlier) {
        return new Cpu(replicaA - earlier.replicaA, replicaB - earlier.replicaB, postgres - earlier.postgres,
                driver - earlier.driver);
    }

    /** Cores each used on average over {@code seconds}. */
    String describe(double seconds) {
        return String.format("cores busy: replica A %.2f, replica B %.2f, PostgreSQL %.2f, load generator %.2f (of %d)",
                replicaA / NANOS_PER_SECOND / seconds, replicaB / NANOS_PER_SECOND / seconds,
                postgres / NANOS_PER_SECOND / seconds, driver / NANOS_PER_SECOND / seconds,
                Runtime.getRuntime().availableProcessors());
    }

    private static String read(Path stat) {
        try {
            return Files.readString(stat);
        } catch (IOException e) {
            return null; // a process that ended meanwhile
        }
    }

    /** Time on a CPU from schedstat's first field; from the ticks of {@code stat} where there is none. */
    private static long runNanos(String schedstat, String stat) {
        if (schedstat == null || schedstat.isBlank()) {
            return ticks(stat) * NANOS_PER_TICK;
        }
        return Long.parseLong(schedstat.trim().split(" ")[0]);
    }

    /** utime + stime: fields 14 and 15, counted after the command name's closing parenthesis. */
    private static long ticks(String stat) {
        if (stat == null) {
            return 0;
        }
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }
}
