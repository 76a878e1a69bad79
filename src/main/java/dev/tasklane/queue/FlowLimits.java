package dev.tasklane.queue;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * A queue's flow control ({@code PATCH /queues/{queue}}, {@code TASKLANE_QUEUES}); null means no
 * such limit.
 *
 * @param maxRunning tasks running at once on the queue, across replicas and pull workers
 * @param maxRunningPerKey the same per concurrency key
 * @param rate claims that may start in any window of its period, across the cluster
 * @param ratePerKey the same per concurrency key
 * @param fairness the order in which due tasks of different keys start
 */
public record FlowLimits(@Nullable Integer maxRunning, @Nullable Integer maxRunningPerKey, @Nullable Rate rate,
                         @Nullable Rate ratePerKey, Fairness fairness) {

    /** The largest count, period or limit a setting may have. */
    public static final int MAX = 1_000_000;

    /** A queue without flow control. */
    public static final FlowLimits NONE = new FlowLimits(null, null, null, null, Fairness.FIFO);

    /**
     * At most {@code count} claims start in any window of {@code periodSeconds}.
     *
     * @param count 1..{@link #MAX}
     * @param periodSeconds 1..{@link #MAX}
     */
    public record Rate(int count, int periodSeconds) {

        public Rate {
            if (count < 1 || count > MAX || periodSeconds < 1 || periodSeconds > MAX) {
                throw new IllegalArgumentException("count and periodSeconds must be within 1.." + MAX);
            }
        }

        long periodMillis() {
            return periodSeconds * 1000L;
        }
    }

    /** How due tasks of different concurrency keys take turns. */
    public enum Fairness {
        /** Priority, then runAt, then id, across the queue. */
        FIFO,
        /** Keys with due tasks take turns; within a key, priority, then runAt, then id. */
        ROUND_ROBIN;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        public static @Nullable Fairness ofWireName(String name) {
            for (Fairness fairness : values()) {
                if (fairness.wireName().equals(name)) {
                    return fairness;
                }
            }
            return null;
        }
    }

    public FlowLimits {
        checkLimit(maxRunning);
        checkLimit(maxRunningPerKey);
    }

    /** Whether claims on the queue must run under its lock. */
    public boolean controlled() {
        return !equals(NONE);
    }

    /** Whether claims must walk the queue key by key (per-key limits, or turns between keys). */
    boolean byKey() {
        return maxRunningPerKey != null || ratePerKey != null || fairness == Fairness.ROUND_ROBIN;
    }

    private static void checkLimit(@Nullable Integer limit) {
        if (limit != null && (limit < 1 || limit > MAX)) {
            throw new IllegalArgumentException("limits must be within 1.." + MAX);
        }
    }
}
