package dev.tasklane.testsupport;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;

/**
 * A local HTTP server for {@code http} tasks to call: {@code /ok} answers 200 "hello",
 * {@code /flaky} 503 on its first call and 200 after, {@code /missing} 404, {@code /binary} 200
 * and {@code /binary-500} 500 with {@link #BINARY} (bytes that are no text: a NUL, invalid
 * UTF-8), {@code /headers} 200. It records every request it receives, and every header of them
 * (names in lower case, values as their bytes in Latin-1).
 */
public final class TestHttpServer implements AutoCloseable {

    /** What {@code /binary} answers: a NUL, then bytes that are not UTF-8. */
    public static final byte[] BINARY = {'P', 'N', 'G', 0, (byte) 0xFF, (byte) 0xD8, 0x10, (byte) 0x80};

    private final HttpServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final List<String> headers = new CopyOnWriteArrayList<>();
    private final AtomicInteger flakyCalls = new AtomicInteger();

    public TestHttpServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            requests.add(exchange.getRequestMethod() + " " + path + " " + body);
            exchange.getRequestHeaders().forEach((name, values) ->
                    values.forEach(value -> headers.add(name.toLowerCase(java.util.Locale.ROOT) + ": " + value)));
            int status = switch (path) {
                case "/ok", "/binary", "/headers" -> 200;
                case "/flaky" -> flakyCalls.incrementAndGet() == 1 ? 503 : 200;
                case "/binary-500" -> 500;
                default -> 404;
            };
            byte[] answer = path.startsWith("/binary") ? BINARY
                    : (status == 200 ? "hello" : "nope").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        });
        server.start();
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public List<String> requests() {
        return List.copyOf(requests);
    }

    public List<String> headers() {
        return List.copyOf(headers);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
