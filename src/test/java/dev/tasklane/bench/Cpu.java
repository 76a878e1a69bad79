package dev.tasklane.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time used so far by the two replicas, every PostgreSQL process and the benchmark's own
 * JVM (the load generator), from
 * {@code /proc/<pid>/stat} (user + system, in clock ticks of 1/100 s): which of them saturates.
 *
 * @param replicaA ticks of replica A
 * @param replicaB ticks of replica B
 * @param postgres ticks of all PostgreSQL processes
 * @param driver ticks of the load generator
 */
record Cpu(long replicaA, long replicaB, long postgres, long driver) {

    private static final double TICKS_PER_SECOND = 100.0;

    static Cpu sample(long pidA, long pidB) throws IOException {
        long postgres = 0;
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            for (Path process : processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .toList()) {
                String stat = read(process.resolve("stat"));
                if (stat != null && stat.contains("(postgres)")) {
                    postgres += ticks(stat);
                }
            }
        }
        return new Cpu(ticks(read(Path.of("/proc", Long.toString(pidA), "stat"))),
                ticks(read(Path.of("/proc", Long.toString(pidB), "stat"))), postgres,
                ticks(read(Path.of("/proc", Long.toString(ProcessHandle.current().pid()), "stat"))));
    }

    Cpu minus(Cpu earlier) {
        return new Cpu(replicaA - earlier.replicaA, replicaB - earlier.replicaB, postgres - earlier.postgres,
                driver - earlier.driver);
    }

    /** Cores each used on average over {@code seconds}. */
    String describe(double seconds) {
        return String.format("cores busy: replica A %.2f, replica B %.2f, PostgreSQL %.2f, load generator %.2f (of %d)",
                replicaA / TICKS_PER_SECOND / seconds, replicaB / TICKS_PER_SECOND / seconds,
                postgres / TICKS_PER_SECOND / seconds, driver / TICKS_PER_SECOND / seconds,
                Runtime.getRuntime().availableProcessors());
    }

    private static String read(Path stat) {
        try {
            return Files.readString(stat);
        } catch (IOException e) {
            return null; // a process that ended meanwhile
        }
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
