package dev.tasklane.testsupport;

import java.time.Duration;

/**
 * Makes every claim on one queue slow, in the database itself: a trigger that sleeps while a task
 * of the queue turns from queued to running. A test can then end a claim's caller (a deadline, a
 * client that hangs up, a drain) while PostgreSQL is still inside the claim statement.
 */
public final class SlowClaims implements AutoCloseable {

    private final String trigger;

    private SlowClaims(String trigger) {
        this.trigger = trigger;
    }

    /** Claims of {@code queue} take at least {@code delay} until {@link #close()}. */
    public static SlowClaims on(String queue, Duration delay) {
        if (!queue.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("not a queue name: " + queue);
        }
        String trigger = "slow_claims_" + queue.replaceAll("[^A-Za-z0-9]", "_");
        Sql.update("CREATE OR REPLACE FUNCTION " + trigger + "() RETURNS trigger LANGUAGE plpgsql AS $$"
                + " BEGIN PERFORM pg_sleep(" + delay.toMillis() / 1000.0 + "); RETURN NEW; END $$");
        Sql.update("CREATE TRIGGER " + trigger + " BEFORE UPDATE ON task FOR EACH ROW"
                + " WHEN (NEW.queue = '" + queue + "' AND OLD.state = 'queued' AND NEW.state = 'running')"
                + " EXECUTE FUNCTION " + trigger + "()");
        return new SlowClaims(trigger);
    }

    @Override
    public void close() {
        Sql.update("DROP TRIGGER IF EXISTS " + trigger + " ON task");
        Sql.update("DROP FUNCTION IF EXISTS " + trigger + "()");
    }
}
