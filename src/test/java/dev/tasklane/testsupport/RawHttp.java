package dev.tasklane.testsupport;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A request written on a plain socket, for tests about clients that hang up half-way. */
public final class RawHttp {

    private RawHttp() {
    }

    /**
     * Sends {@code requestHead} (request line and headers, without the blank line; the test token
     * and {@code Connection: close} are added) and {@code body}, and returns everything the server answered until it
     * closed the connection. The bytes go out exactly as given: paths a client library would
     * normalize (encoded slashes, dot segments, bytes that are not UTF-8) reach the server as they are.
     */
    public static String exchange(int port, byte[] requestHead, byte[] body) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(requestHead);
            out.write(("\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + IntegrationTest.TOKEN
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Opens a connection, sends a complete POST with the test token, and returns the still-open socket. */
    public static Socket post(int port, String path, String json) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + IntegrationTest.TOKEN
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n";
        OutputStream out = socket.getOutputStream();
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        return socket;
    }
}
