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
