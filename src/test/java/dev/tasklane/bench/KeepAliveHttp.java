package dev.tasklane.bench;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

/**
 * The harness's HTTP client for the calls it measures: HTTP/1.1 over kept-alive sockets, one
 * request at a time on each, blocking. The load generator shares the machine's two cores with the
 * replicas and PostgreSQL, so what it spends is taken from them: {@code java.net.http.HttpClient}
 * spent 0.21–0.29 ms of CPU per single enqueue against this client's 0.06–0.07 ms (a warm replica,
 * 16 in flight, 20,000 requests a round), about half of what the replica spent. The peers' script
 * calls its libraries in one Node.js process beside PostgreSQL.
 */
final class KeepAliveHttp {

    /** Below the service's idle timeout (30 s), so that a pooled connection is never one it closed. */
    private static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(10);

    record Response(int status, String body) {
    }

    private final String authorization;
    private final Map<Integer, ConcurrentLinkedDeque<Connection>> idle = new ConcurrentHashMap<>();

    KeepAliveHttp(String token) {
        this.authorization = "Bearer " + token;
    }

    /** POSTs {@code body} (JSON, or nothing when null) to {@code path} on 127.0.0.1:{@code port}. */
    Response post(int port, String path, String body) {
        Connection connection = borrow(port);
        try {
            Response response = connection.post(path, body, authorization);
            if (connection.reusable) {
                idle.computeIfAbsent(port, p -> new ConcurrentLinkedDeque<>()).push(connection);
            } else {
                connection.close();
            }
            return response;
        } catch (IOException e) {
            connection.close();
            throw new UncheckedIOException("POST " + path + " on port " + port, e);
        } catch (RuntimeException e) {
            connection.close(); // a garbled answer (a status that is no number): the socket is of no more use
            throw e;
        }
    }

    private Connection borrow(int port) {
        ConcurrentLinkedDeque<Connection> pooled = idle.get(port);
        for (Connection c; pooled != null && (c = pooled.poll()) != null; ) {
            if (System.nanoTime() - c.lastUsed < MAX_IDLE_NANOS) {
                return c;
            }
            c.close();
        }
        try {
            return new Connection(port);
        } catch (IOException e) {
            throw new UncheckedIOException("connect to port " + port, e);
        }
    }

    private static final class Connection {

        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;
        private final String host;
        private long lastUsed = System.nanoTime();
        private boolean reusable = true;

        Connection(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) TimeUnit.MINUTES.toMillis(2));
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
            host = "127.0.0.1:" + port;
        }

        Response post(String path, String body, String authorization) throws IOException {
            byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            StringBuilder head = new StringBuilder(256).append("POST ").append(path).append(" HTTP/1.1\r\n")
                    .append("Host: ").append(host).append("\r\n")
                    .append("Authorization: ").append(authorization).append("\r\n")
                    .append("Content-Length: ").append(content.length).append("\r\n");
            if (body != null) {
                head.append("Content-Type: application/json\r\n");
            }
            // one write, so that the request leaves in one segment
            byte[] headBytes = head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
            byte[] request = new byte[headBytes.length + content.length];
            System.arraycopy(headBytes, 0, request, 0, headBytes.length);
            System.arraycopy(content, 0, request, headBytes.length, content.length);
            out.write(request);
            out.flush();

            String statusLine = line();
            if (!statusLine.startsWith("HTTP/1.1 ") || statusLine.length() < 12) {
                throw new IOException("not an HTTP/1.1 status line: " + statusLine);
            }
            int status = Integer.parseInt(statusLine.substring(9, 12));
            long length = -1;
            for (String header; !(header = line()).isEmpty(); ) {
                int colon = header.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = header.substring(0, colon).trim();
                String value = header.substring(colon + 1).trim();
                if (name.equalsIgnoreCase("Content-Length")) {
                    length = Long.parseLong(value);
                } else if (name.equalsIgnoreCase("Connection")) {
                    reusable &= !value.equalsIgnoreCase("close");
                }
            }
            // The service sizes every answer the harness posts for; a streamed one would be news.
            if (length < 0) {
                throw new IOException("an answer without Content-Length to POST " + path + ": " + statusLine);
            }
            byte[] responseBody = in.readNBytes(Math.toIntExact(length));
            if (responseBody.length < length) {
                throw new EOFException("the body ended after " + responseBody.length + " of " + length + " bytes");
            }
            lastUsed = System.nanoTime();
            return new Response(status, new String(responseBody, StandardCharsets.UTF_8));
        }

        private String line() throws IOException {
            StringBuilder line = new StringBuilder(64);
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new EOFException("the connection closed mid-response");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing: nothing more to do with it
            }
        }
    }
}
