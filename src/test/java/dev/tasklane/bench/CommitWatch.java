package dev.tasklane.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.tasklane.testsupport.TestDatabase;

/**
 * When events became visible in the database, as seen by a poller: the "commit" end of the
 * commit → delivery figure, measured on a stock server (commit timestamps need a setting and a
 * restart). It reads the highest visible event id every millisecond. An event counts as visible
 * from the start of the first read that saw its id or a higher one; a higher id that commits
 * first makes an event look visible early, so the figure errs towards a longer delivery, never
 * a shorter one, by the poll period at most in the other direction.
 */
final class CommitWatch implements AutoCloseable {

    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** From {@code nanoTime} on, every event id up to {@code maxId} was visible. */
    private record Sample(long nanoTime, long maxId) {
    }

    // Written by the watching thread only; read after it has stopped (join orders the two).
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile SQLException failure;

    private CommitWatch() {
        this.thread = new Thread(this::watch, "commit-watch");
        this.thread.setDaemon(true);
    }

    static CommitWatch start() {
        CommitWatch watch = new CommitWatch();
        watch.thread.start();
        return watch;
    }

    private void watch() {
        try (Connection connection = TestDatabase.get().connect();
             PreparedStatement maxId = connection.prepareStatement(
                     "SELECT coalesce((SELECT first_id + size - 1 FROM task_event_batch"
                             + " ORDER BY first_id DESC LIMIT 1), 0)")) {
            long last = -1;
            while (running) {
                long started = System.nanoTime();
                try (ResultSet row = maxId.executeQuery()) {
                    row.next();
                    long seen = row.getLong(1);
                    if (seen > last) {
                        samples.add(new Sample(started, seen));
                        last = seen;
                    }
                }
                LockSupport.parkNanos(PERIOD_NANOS - (System.nanoTime() - started));
            }
        } catch (SQLException e) {
            failure = e;
        }
    }

    /** Stops watching; the visibility of what was seen can be asked from now on. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join();
        if (failure != null) {
            throw new IllegalStateException("the commit watch failed", failure);
        }
    }

    /** When the event {@code id} was first seen visible ({@code nanoTime}); -1 if it never was. */
    long visibleAt(long id) {
        int low = 0;
        int high = samples.size() - 1;
        long found = -1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            if (samples.get(middle).maxId() >= id) {
                found = samples.get(middle).nanoTime();
                high = middle - 1;
            } else {
                low = middle + 1;
            }
        }
        return found;
    }
}
