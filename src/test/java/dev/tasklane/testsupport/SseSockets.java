package dev.tasklane.testsupport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Event streams on plain sockets: subscribers that stop reading, and reading them again later. */
public final class SseSockets {

    private SseSockets() {
    }

    /** Opens a stream on a socket with a tiny receive buffer and reads nothing from it. */
    public static Socket stalled(int port, String path, String token) throws Exception {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(1024);
        socket.connect(new InetSocketAddress("127.0.0.1", port));
        sendGet(socket, path, "Authorization: Bearer " + token + "\r\n");
        return socket;
    }

    /**
     * The status line of a GET of {@code path} sent with no Authorization header, read from a
     * plain socket that is closed at once: a stream that never ends answers it too.
     */
    public static String statusLine(int port, String path, Duration patience) throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port));
            socket.setSoTimeout((int) patience.toMillis());
            sendGet(socket, path, "");
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
        }
    }

    private static void sendGet(Socket socket, String path, String extraHeaders) throws Exception {
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" + extraHeaders
                + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Reads the event ids a stream sends until {@code last} arrives (or the stream or the patience ends). */
    public static List<Long> readEventIds(Socket socket, long last, Duration patience) throws Exception {
        socket.setSoTimeout((int) patience.toMillis());
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8),
                1 << 16);
        List<Long> ids = new ArrayList<>();
        long deadline = System.nanoTime() + patience.toNanos();
        while ((ids.isEmpty() || ids.get(ids.size() - 1) < last) && System.nanoTime() < deadline) {
            String line = in.readLine();
            if (line == null) {
                break;
            }
            if (line.startsWith("id: ")) {
                ids.add(Long.parseLong(line.substring(4).strip()));
            }
        }
        return ids;
    }
}
