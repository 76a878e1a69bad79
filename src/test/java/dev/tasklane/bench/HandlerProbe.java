package dev.tasklane.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpServer;

/**
 * Where {@code http} tasks land when the harness needs to know when a replica's handler started:
 * it records, by this JVM's clock, when the request of each task arrived ({@code /<n>}). That is
 * the peers' "handler start", observed from outside and a little late (the handler's request has
 * to cross the loopback first), on the same clock as the enqueue call's return.
 */
final class HandlerProbe implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(4);
    private final Map<Integer, Long> arrivedNanos = new ConcurrentHashMap<>();

    HandlerProbe() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            long arrived = System.nanoTime();
            try (exchange) {
                String path = exchange.getRequestURI().getPath().substring(1);
                if (!path.isEmpty() && path.chars().allMatch(Character::isDigit)) {
                    arrivedNanos.putIfAbsent(Integer.parseInt(path), arrived);
                }
                exchange.getRequestBody().readAllBytes();
                exchange.sendResponseHeaders(204, -1);
            }
        });
        server.start();
    }

    /** The payload of an {@code http} task that reports to {@code /<n>}. */
    String task(int n) {
        return "{\"type\": \"http\", \"payload\": {\"url\": \"http://127.0.0.1:" + server.getAddress().getPort() + "/"
                + n + "\"}}";
    }

    /** When the request of task {@code n} arrived ({@link System#nanoTime()}), or null if it has not. */
    Long arrivedNanos(int n) {
        return arrivedNanos.get(n);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
