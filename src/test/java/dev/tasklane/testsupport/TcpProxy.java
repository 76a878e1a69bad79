package dev.tasklane.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy between a replica and PostgreSQL that a test can cut (every connection dropped,
 * new ones refused) or stall (every connection stops forwarding without closing: a half-open
 * network, a hung PgBouncer) and restore: a database outage for one replica, without touching the
 * shared server. Plain threads: it is test support, not the code under test.
 */
public final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean stalled;
    // Connections opened before this generation stall (see stallOpen); new ones flow.
    private volatile long stalledBefore = -1;
    private volatile boolean partitioned;
    private final java.util.concurrent.atomic.AtomicLong nextGeneration = new java.util.concurrent.atomic.AtomicLong();

    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Drops every connection and refuses new ones until {@link #restore()}. */
    public void cut() {
        cut = true;
        open.forEach(TcpProxy::closeQuietly);
        open.clear();
    }

    /** Stops forwarding on every connection, open or new, keeping them open, until {@link #restore()}. */
    public void stall() {
        stalled = true;
    }

    /**
     * Stops forwarding on the connections open now, keeping them open, while new connections flow:
     * a half-open socket (a dropped NAT entry, a peer gone without a word) that a reconnect fixes.
     */
    public void stallOpen() {
        stalledBefore = nextGeneration.get();
    }

    /**
     * Like {@link #stall()}, and a side that closes a connection is not passed on to the other
     * either: a network partition, where the peer beyond never hears of the close.
     */
    public void partition() {
        partitioned = true;
        stall();
    }

    public void restore() {
        cut = false;
        stalled = false;
        partitioned = false;
        stalledBefore = -1;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket upstream = new Socket(targetHost, targetPort);
                open.add(client);
                open.add(upstream);
                long connection = nextGeneration.getAndIncrement();
                pump(client, upstream, connection);
                pump(upstream, client, connection);
            } catch (IOException e) {
                // closed, or the target refused: the client sees its connection fail
            }
        }
    }

    private void pump(Socket from, Socket to, long connection) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    while ((stalled || connection < stalledBefore) && !cut) {
                        Thread.sleep(5); // what was read waits here, as in a stalled network
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    while (partitioned && (stalled || connection < stalledBefore) && !cut) {
                        Thread.sleep(5); // the close waits here, as behind a partition
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        server.close();
    }
}
