package dev.tasklane.notify;

/** The channels the service NOTIFYs and LISTENs on, and what their payloads hold. */
public enum Channel {

    /** Tasks became due on a queue; payload {@code queue} or {@code queue@epochMicros}. */
    WAKE("tasklane_wake"),
    /** A queue's flow control changed; payload the queue. */
    FLOW("tasklane_flow"),
    /** A running attempt was cancelled; payload {@code taskId:leaseId}. */
    CANCEL("tasklane_cancel"),
    /**
     * Events were appended on some replica; payload empty. The statements of {@code TaskSql}
     * NOTIFY it themselves, by this name.
     */
    EVENTS("tasklane_events");

    private final String sqlName;

    Channel(String sqlName) {
        this.sqlName = sqlName;
    }

    /** The channel's name in PostgreSQL. */
    public String sqlName() {
        return sqlName;
    }

    static Channel ofSqlName(String name) {
        for (Channel channel : values()) {
            if (channel.sqlName.equals(name)) {
                return channel;
            }
        }
        throw new IllegalArgumentException("not a tasklane channel: " + name);
    }
}
