package dev.tasklane.client.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy to the service that loses the answers on its first {@code losses} connections: it
 * passes the request on, waits until the service begins to answer (so the request was carried
 * out), and then cuts the connection without passing the answer back, as a network does when it
 * fails at the worst moment. Later connections pass through.
 */
public final class LosingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int target;
    private final int losses;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger lost = new AtomicInteger();

    private LosingProxy(ServerSocket listener, int target, int losses) {
        this.listener = listener;
        this.target = target;
        this.losses = losses;
    }

    public static LosingProxy start(int target, int losses) throws IOException {
        LosingProxy proxy = new LosingProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), target, losses);
        daemon(proxy::accept);
        return proxy;
    }

    public int port() {
        return listener.getLocalPort();
    }

    public int answersLost() {
        return lost.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                boolean lose = connections.incrementAndGet() <= losses;
                daemon(() -> pipe(client, upstream, false));
                daemon(() -> pipe(upstream, client, lose));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void pipe(Socket from, Socket to, boolean loseAnswer) {
        byte[] buffer = new byte[16384];
        try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int read;
            while ((read = in.read(buffer)) >= 0) {
                if (loseAnswer) {
                    lost.incrementAndGet();
                    return; // closes both sockets: the request was served, its answer never arrives
                }
                out.write(buffer, 0, read);
                out.flush();
            }
        } catch (IOException ended) {
            // either side went away
        }
    }

    private static void daemon(Runnable work) {
        Thread thread = new Thread(work, "losing-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
