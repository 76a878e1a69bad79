package dev.tasklane.client.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The service's own jar ({@code target/tasklane-*.jar} of the repository root, built by its
 * {@code package} phase) as a process on a database of its own, which the service creates at start
 * and this drops at close. It keeps its port across restarts, as a Kubernetes Service does.
 *
 * <p>The database server: {@code TEST_DATABASE_URL} (a JDBC URL of a server where databases may
 * be created), else {@code PGHOST}/{@code PGPORT}/{@code PGUSER}/{@code PGPASSWORD}, else
 * {@code postgres} on 127.0.0.1:5432 (the repository's {@code .ci/test} starts one).
 */
public final class TasklaneService implements AutoCloseable {

    public static final String TOKEN = "client-test-token";

    private final Path jar;
    private final Server server;
    private final String database;
    private final int port;
    private final Map<String, String> settings;
    private final Path log;
    private Process process;

    private TasklaneService(Path jar, Server server, String database, int port, Map<String, String> settings, Path log) {
        this.jar = jar;
        this.server = server;
        this.database = database;
        this.port = port;
        this.settings = settings;
        this.log = log;
    }

    /** Starts the service with these settings over the test defaults, and waits until it is ready. */
    public static TasklaneService start(Map<String, String> settings) throws IOException {
        Server server = Server.fromEnvironment();
        server.check();
        String database = "tasklane_client_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24));
        TasklaneService service = new TasklaneService(findJar(), server, database, freePort(), Map.copyOf(settings),
                Files.createTempFile("tasklane-service", ".log"));
        service.launch();
        return service;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** SIGTERM, as Kubernetes stops a pod; waits for the exit. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts it again on the same port and database. */
    public void restart() throws IOException, InterruptedException {
        stop();
        launch();
    }

    /** Everything it has logged, for a failing test's message. */
    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (Connection admin = server.connect("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        }
        Files.deleteIfExists(log);
    }

    private void launch() throws IOException {
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("SERVER_PORT", Integer.toString(port));
        environment.put("SPRING_R2DBC_URL", "r2dbc:postgresql://" + server.host + ":" + server.port + "/" + database);
        environment.put("SPRING_R2DBC_USERNAME", server.user);
        environment.put("SPRING_R2DBC_PASSWORD", server.password);
        environment.put("TASKLANE_API_TOKENS", TOKEN);
        environment.put("TASKLANE_WORKER_QUEUES", "default:4");
        environment.put("SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE", "5s");
        environment.putAll(settings);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-XX:TieredStopAtLevel=1", "-jar", jar.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(environment);
        int from = Files.readString(log).length();
        process = builder.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline && process.isAlive()) {
            if (Files.readString(log).substring(from).contains("Started TasklaneApplication") && accepts()) {
                return;
            }
            sleep(100);
        }
        process.destroyForcibly();
        throw new IllegalStateException("the service did not start:\n" + Files.readString(log));
    }

    private boolean accepts() {
        try (Socket ignored = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static Path findJar() throws IOException {
        Path directory = Path.of(System.getProperty("tasklane.service.dir", "../../../target")).normalize();
        if (Files.isDirectory(directory)) {
            try (var files = Files.list(directory)) {
                List<Path> jars = files.filter(f -> f.getFileName().toString().matches("tasklane-.*\\.jar")).toList();
                if (jars.size() == 1) {
                    return jars.get(0);
                }
            }
        }
        throw new IllegalStateException("The client's tests run against the service's jar, which is not in " + directory.toAbsolutePath()
                + ": build it first in the repository root (./mvnw -B -DskipTests package, or the README's test command,"
                + " which builds it before these tests)");
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Where the database server is and how to log in. */
    private record Server(String host, int port, String user, String password) {

        static Server fromEnvironment() {
            String url = System.getenv("TEST_DATABASE_URL");
            if (url != null && !url.isBlank()) {
                URI uri = URI.create(url.substring("jdbc:".length()));
                Map<String, String> query = new LinkedHashMap<>();
                if (uri.getQuery() != null) {
                    for (String pair : uri.getQuery().split("&")) {
                        String[] parts = pair.split("=", 2);
                        query.put(parts[0], parts.length > 1 ? parts[1] : "");
                    }
                }
                return new Server(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort(),
                        query.getOrDefault("user", "postgres"), query.getOrDefault("password", ""));
            }
            return new Server(env("PGHOST", "127.0.0.1"), Integer.parseInt(env("PGPORT", "5432")),
                    env("PGUSER", "postgres"), env("PGPASSWORD", ""));
        }

        void check() {
            try (Connection ignored = connect("postgres")) {
                // reachable
            } catch (SQLException e) {
                throw new IllegalStateException("The client's tests need a PostgreSQL where they may create databases: "
                        + user + "@" + host + ":" + port + " answered " + e.getMessage()
                        + ". Run the repository's .ci/test (it starts one), or set TEST_DATABASE_URL"
                        + " (jdbc:postgresql://HOST:5432/postgres?user=U&password=P) or PGHOST/PGPORT/PGUSER/PGPASSWORD.", e);
            }
        }

        Connection connect(String database) throws SQLException {
            return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + database, user, password);
        }

        private static String env(String name, String fallback) {
            String value = System.getenv(name);
            return value == null || value.isBlank() ? fallback : value;
        }
    }
}
