package dev.tasklane.notify;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.test.StepVerifier;

class NotifierIntegrationTests extends IntegrationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(10);

    @Autowired
    private Notifier notifier;

    @Test
    void aReplicaHearsTheNoticesOfOtherSessionsButNotItsOwn() throws Exception {
        String ready = "ready-" + UUID.randomUUID();
        String own = "own-" + UUID.randomUUID();
        String other = "other-" + UUID.randomUUID();
        try (Connection bystander = TestDatabase.get().connect()) {
            try (Statement listen = bystander.createStatement()) {
                listen.execute("LISTEN " + Channel.WAKE.sqlName());
            }
            // The replica is listening once it hears a notice; then its own goes out before the
            // other session's, and notices arrive in commit order: heard at all, it would come first.
            StepVerifier.create(notifier.notifications(Channel.WAKE).filter(ready::equals).next())
                    .then(() -> Sql.column("SELECT pg_notify(?, ?)::text", Channel.WAKE.sqlName(), ready))
                    .expectNext(ready)
                    .expectComplete()
                    .verify(PATIENCE);
            StepVerifier.create(notifier.notifications(Channel.WAKE).filter(p -> p.equals(own) || p.equals(other)).next())
                    .then(() -> notifier.send(Channel.WAKE, List.of(own)).block(PATIENCE))
                    .then(() -> Sql.column("SELECT pg_notify(?, ?)::text", Channel.WAKE.sqlName(), other))
                    .expectNext(other)
                    .expectComplete()
                    .verify(PATIENCE);

            assertThat(heardBy(bystander, own, other)).as("sent to every other session").containsSubsequence(own, other);
        }
    }

    /** Of {@code wanted}, what the connection heard, in order, once it heard them all or gave up. */
    private static List<String> heardBy(Connection connection, String... wanted) throws Exception {
        List<String> payloads = new ArrayList<>();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!payloads.containsAll(List.of(wanted)) && System.nanoTime() < deadline) {
            PGNotification[] notifications = connection.unwrap(PGConnection.class).getNotifications(500);
            for (PGNotification notification : notifications == null ? new PGNotification[0] : notifications) {
                if (List.of(wanted).contains(notification.getParameter())) {
                    payloads.add(notification.getParameter());
                }
            }
        }
        return payloads;
    }
}
