package dev.tasklane.client.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tasklane.client.TasklaneClient;

/**
 * A TCP proxy to the service that loses what a network loses when it fails at the worst moment.
 * {@link #start} loses the answers on its first {@code losses} connections: it passes the
 * request on, waits until the service begins to answer (so the request was carried out), and
 * then cuts the connection without passing the answer back. {@link #losingAnswersTo} and
 * {@link #losingRequestsTo} do the same to the first {@code losses} requests whose request line
 * contains a given text, or cut the connection before such a request reaches the service.
 * {@link #silentAfter} stops answering such a request without closing. Everything else passes
 * through, until {@link #cut} cuts the network: every connection, open or new, until {@link #mend}.
 */
public final class LosingProxy implements AutoCloseable {

    /** What the proxy loses. */
    private enum Loss { FIRST_CONNECTIONS, ANSWERS_TO, REQUESTS_TO, SILENCE_AFTER }

    private final ServerSocket listener;
    private final int target;
    private final int losses;
    private final Loss loss;
    private final String requestText;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger matched = new AtomicInteger();
    private final AtomicInteger lost = new AtomicInteger();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;

    private LosingProxy(int target, int losses, Loss loss, String requestText) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.target = target;
        this.losses = losses;
        this.loss = loss;
        this.requestText = requestText;
    }

    public static LosingProxy start(int target, int losses) throws IOException {
        return started(new LosingProxy(target, losses, Loss.FIRST_CONNECTIONS, ""));
    }

    /** Loses the answers to the first {@code losses} requests whose request line contains {@code text}. */
    public static LosingProxy losingAnswersTo(int target, String text, int losses) throws IOException {
        return started(new LosingProxy(target, losses, Loss.ANSWERS_TO, text));
    }

    /** Cuts the connection before the first {@code losses} requests whose request line contains {@code text} arrive. */
    public static LosingProxy losingRequestsTo(int target, String text, int losses) throws IOException {
        return started(new LosingProxy(target, losses, Loss.REQUESTS_TO, text));
    }

    /**
     * Holds the first {@code losses} requests whose request line contains {@code text}, and
     * everything after them on their connections, without passing anything on or closing: a
     * peer that stopped answering.
     */
    public static LosingProxy silentAfter(int target, String text, int losses) throws IOException {
        return started(new LosingProxy(target, losses, Loss.SILENCE_AFTER, text));
    }

    private static LosingProxy started(LosingProxy proxy) {
        daemon(proxy::accept);
        return proxy;
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** A client of the service through this proxy, retrying quickly. */
    public TasklaneClient client() {
        return clientBuilder().build();
    }

    /** The builder of {@link #client()}, for a test to set more. */
    public TasklaneClient.Builder clientBuilder() {
        return TasklaneClient.builder("http://127.0.0.1:" + port()).token(TasklaneService.TOKEN)
                .retries(5, Duration.ofMillis(50));
    }

    public int answersLost() {
        return lost.get();
    }

    /** Closes every connection through the proxy, and each new one at once, until {@link #mend}. */
    public void cut() {
        cut = true;
        open.forEach(LosingProxy::closeQuietly);
    }

    /** Lets connections through again after {@link #cut}. */
    public void mend() {
        cut = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                open.add(client);
                open.add(upstream);
                AtomicBoolean loseAnswer = new AtomicBoolean(
                        loss == Loss.FIRST_CONNECTIONS && connections.incrementAndGet() <= losses);
                daemon(() -> requests(client, upstream, loseAnswer));
                daemon(() -> answers(upstream, client, loseAnswer));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void requests(Socket from, Socket to, AtomicBoolean loseAnswer) {
        byte[] buffer = new byte[16384];
        try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int read;
            while ((read = in.read(buffer)) >= 0) {
                if (loss != Loss.FIRST_CONNECTIONS && requestLineContainsText(buffer, read) && matched.incrementAndGet() <= losses) {
                    if (loss == Loss.REQUESTS_TO) {
                        lost.incrementAndGet();
                        return; // closes both sockets: the request never reaches the service
                    }
                    if (loss == Loss.SILENCE_AFTER) {
                        lost.incrementAndGet();
                        in.transferTo(OutputStream.nullOutputStream()); // until the client gives up
                        return;
                    }
                    loseAnswer.set(true);
                }
                out.write(buffer, 0, read);
                out.flush();
            }
        } catch (IOException ended) {
            // either side went away
        } finally {
            open.remove(from);
            open.remove(to);
        }
    }

    /** Whether the request line that starts this read contains the text looked for. */
    private boolean requestLineContainsText(byte[] buffer, int length) {
        int end = 0;
        while (end < length && buffer[end] != '\n') {
            end++;
        }
        return new String(buffer, 0, end, StandardCharsets.US_ASCII).contains(requestText);
    }

    private void answers(Socket from, Socket to, AtomicBoolean loseAnswer) {
        byte[] buffer = new byte[16384];
        try (from; to; InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int read;
            while ((read = in.read(buffer)) >= 0) {
                if (loseAnswer.get()) {
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

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
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
