package dev.tasklane.config;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Timestamps read through either pool as {@code Instant} are the instants PostgreSQL holds, in its
 * calendar, and the API gives back the times it was given.
 */
final class BinaryInstantCodecIntegrationTests extends IntegrationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String VALUES = """
            SELECT at, (extract(epoch FROM at) * 1000000)::bigint AS micros FROM (VALUES
                (now()), (timestamptz '2000-01-01 00:00:00+00'), (timestamptz '1970-01-01 00:00:00+00'),
                (timestamptz '1999-12-31 23:59:59.999999+00'), (timestamptz '1969-12-31 23:59:59.000001+00'),
                (timestamptz '1582-10-15 00:00:00+00'), (timestamptz '1582-10-04 23:59:59.5+00'),
                (timestamptz '1500-02-28 12:00:00+00'), (timestamptz '0001-01-01 00:00:00+00'),
                (timestamptz '4713-01-01 00:00:00+00 BC'), (timestamptz '9999-12-31 23:59:59.999999+00'),
                (timestamptz '200000-12-31 23:59:59.999999+00')
            ) v(at)
            UNION ALL
            SELECT at, (extract(epoch FROM at) * 1000000)::bigint FROM (
                SELECT timestamptz '4000-01-01 00:00:00+00 BC' + random() * interval '12000 years' AS at
                FROM generate_series(1, 2000)) r
            LIMIT :limit
            """;

    @Autowired
    private DatabaseClient db;
    @Autowired
    private WorkerDatabase workerDatabase;

    @Test
    void bothPoolsReadEveryTimestampAsTheInstantPostgreSQLHolds() {
        for (DatabaseClient client : List.of(db, workerDatabase.client())) {
            // A bound parameter: only a prepared statement's rows come in binary, as every statement's of the service do.
            List<Map.Entry<Instant, Long>> read = client.sql(VALUES).bind("limit", 10_000)
                    .map(row -> Map.entry(row.get("at", Instant.class), row.get("micros", Long.class)))
                    .all().collectList().block(PATIENCE);
            assertThat(read).hasSize(2012).allSatisfy(pair -> assertThat(
                    Math.addExact(Math.multiplyExact(pair.getKey().getEpochSecond(), 1_000_000L), pair.getKey().getNano() / 1000))
                    .as("%s", pair.getKey()).isEqualTo(pair.getValue()));
        }
        assertThat(db.sql("SELECT CASE WHEN :one = 1 THEN NULL::timestamptz END AS at").bind("one", 1)
                .map(row -> Optional.ofNullable(row.get("at", Instant.class))).one().block(PATIENCE)).isEmpty();
    }

    @Test
    void anInstantBoundAsAParameterComesBackTheSame() {
        Instant at = Instant.parse("2026-12-07T03:30:00.123456Z");
        Instant read = db.sql("SELECT :at::timestamptz AS at").bind("at", at)
                .map(row -> row.get("at", Instant.class)).one().block(PATIENCE);
        assertThat(read).isEqualTo(at);
        String text = db.sql("SELECT :at::timestamptz::text AS at").bind("at", at)
                .map(row -> row.get("at", String.class)).one().block(PATIENCE);
        assertThat(text).startsWith("2026-12-07 ").contains(":30:00.123456");
    }

    /** The driver's own reading turned these Julian: 0001-01-01 came back as 0000-12-30. */
    @Test
    void aTaskToRunLongAgoIsAnsweredWithTheTimeItWasGiven() {
        String queue = TaskFixtures.uniqueQueue("long-ago");
        for (String runAt : List.of("0001-01-01T00:00:00.000000Z", "1582-10-04T12:00:00.000001Z",
                "1500-02-28T23:59:59.999999Z")) {
            JsonNode task = new Tasks(api()).enqueue(queue, "{\"type\": \"noop\", \"runAt\": \"" + runAt + "\"}");
            assertThat(task.get("runAt").asText()).isEqualTo(runAt);
            assertThat(api().get().uri("/api/v1/tasks/{id}", task.get("id").asLong()).exchange().expectStatus().isOk()
                    .expectBody(JsonNode.class).returnResult().getResponseBody().get("runAt").asText()).isEqualTo(runAt);
        }
    }
}
