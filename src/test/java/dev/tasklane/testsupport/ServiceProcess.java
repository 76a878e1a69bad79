package dev.tasklane.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The service as a process of its own, started from the test classpath (or, for the benchmark,
 * from the built jar with {@code java -jar}) on the test database the way operators start it
 * (environment variables): for tests about signals and logs, and for the benchmark. Its output goes to a file, not a pipe, because a pipe's last lines can be lost when
 * the process exits.
 */
public final class ServiceProcess implements AutoCloseable {

    private static final Pattern PORT = Pattern.compile("Netty started on port (\\d+)");

    private final Process process;
    private final Path log;
    private final int port;

    private ServiceProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /**
     * Starts a replica and waits until it serves HTTP.
     *
     * @param settings environment variables over the defaults (test database, port 0)
     * @param jvmOptions options for its JVM, such as {@code -Xmx512m}
     */
    public static ServiceProcess start(Map<String, String> settings, String... jvmOptions) throws IOException {
        return start(null, settings, jvmOptions);
    }

    /**
     * Starts a replica and waits until it serves HTTP.
     *
     * @param jar the built jar to run with {@code java -jar}; null for the test classpath
     * @param settings environment variables over the defaults (test database, port 0)
     * @param jvmOptions options for its JVM, such as {@code -Xmx512m}
     */
    public static ServiceProcess start(@Nullable Path jar, Map<String, String> settings, String... jvmOptions)
            throws IOException {
        TestDatabase.Coordinates database = TestDatabase.get();
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("SERVER_PORT", "0");
        environment.put("SPRING_R2DBC_URL", database.r2dbcUrl());
        environment.put("SPRING_R2DBC_USERNAME", database.user());
        environment.put("SPRING_R2DBC_PASSWORD", database.password());
        environment.putAll(settings);
        List<String> command = new java.util.ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(jvmOptions));
        command.addAll(jar != null ? List.of("-jar", jar.toString())
                : List.of("-cp", System.getProperty("java.class.path"), "dev.tasklane.TasklaneApplication"));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment);
        Path log = Files.createTempFile("tasklane-process", ".log");
        builder.redirectErrorStream(true).redirectOutput(log.toFile());
        Process process = builder.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            Matcher matcher = PORT.matcher(Files.readString(log));
            if (matcher.find()) {
                return new ServiceProcess(process, log, Integer.parseInt(matcher.group(1)));
            }
            if (!process.isAlive()) {
                break;
            }
            sleep(Duration.ofMillis(100));
        }
        process.destroyForcibly();
        throw new IllegalStateException("the service did not start:\n" + Files.readString(log));
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    /** Everything it has written so far, a line each. */
    public List<String> lines() throws IOException {
        return Files.readAllLines(log);
    }

    /** Copies everything it has written so far to {@code target}. */
    public void copyLog(Path target) throws IOException {
        Files.createDirectories(target.toAbsolutePath().getParent());
        Files.copy(log, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /** Sends SIGTERM and waits for the exit; true if it exited within {@code patience}. */
    public boolean terminate(Duration patience) throws InterruptedException {
        process.destroy();
        return process.waitFor(patience.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws IOException {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(log);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
