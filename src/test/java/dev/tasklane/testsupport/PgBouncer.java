package dev.tasklane.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A PgBouncer of its own in front of the test server (any database on it), in transaction mode, as operators run it
 * (Debian's {@code pgbouncer}; {@code .ci/test} installs it). It lets every client in as the test
 * database's user ({@code auth_type = any}) and ignores the JDBC driver's
 * {@code extra_float_digits}, which it would otherwise refuse. As root it runs as {@code postgres}:
 * PgBouncer will not run as root.
 */
public final class PgBouncer implements AutoCloseable {

    private static final List<Path> BINARIES = List.of(Path.of("/usr/sbin/pgbouncer"), Path.of("/usr/bin/pgbouncer"));

    private final Process process;
    private final Path directory;
    private final int port;

    private PgBouncer(Process process, Path directory, int port) {
        this.process = process;
        this.directory = directory;
        this.port = port;
    }

    /** Starts one in transaction mode and waits until it accepts connections. */
    public static PgBouncer startInTransactionMode() throws IOException, InterruptedException {
        Path binary = BINARIES.stream().filter(Files::isExecutable).findFirst().orElseThrow(() -> new IllegalStateException(
                "PgBouncer is not installed: run the tests with .ci/test, which installs it, or install it yourself "
                        + "(Debian and Ubuntu: apt-get install pgbouncer)"));
        TestDatabase.Coordinates database = TestDatabase.get();
        int port = freePort();
        Path directory = Files.createTempDirectory("tasklane-pgbouncer");
        // Readable and writable by the user PgBouncer runs as, which is not ours when we are root.
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path config = directory.resolve("pgbouncer.ini");
        Files.writeString(config, """
                [databases]
                * = host=%s port=%d user=%s%s

                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = %d
                unix_socket_dir =
                auth_type = any
                pool_mode = transaction
                max_client_conn = 500
                default_pool_size = 20
                ignore_startup_parameters = extra_float_digits
                logfile = %s
                pidfile = %s
                """.formatted(database.host(), database.port(), database.user(), database.password().isEmpty() ? "" : " password=" + database.password(), port,
                directory.resolve("pgbouncer.log"), directory.resolve("pgbouncer.pid")));
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "postgres"));
        }
        command.add(config.toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(directory.resolve("stdout.log").toFile()).start();
        PgBouncer bouncer = new PgBouncer(process, directory, port);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                break;
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return bouncer;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        String log = bouncer.log();
        bouncer.close();
        throw new IllegalStateException("PgBouncer did not start:\n" + log);
    }

    public int port() {
        return port;
    }

    /** An R2DBC URL of a database on the test server through this PgBouncer, with the given URL options. */
    public String r2dbcUrl(String database, String options) {
        return "r2dbc:postgresql://127.0.0.1:" + port + "/" + database + (options.isEmpty() ? "" : "?" + options);
    }

    /** What it has logged, for a failing test's message. */
    public String log() throws IOException {
        StringBuilder log = new StringBuilder();
        for (String name : List.of("stdout.log", "pgbouncer.log")) {
            Path file = directory.resolve(name);
            if (Files.exists(file)) {
                log.append(Files.readString(file));
            }
        }
        return log.toString();
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
        }
        Files.deleteIfExists(directory);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        }
    }
}
