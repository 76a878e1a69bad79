package dev.tasklane.config;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

import static org.assertj.core.api.Assertions.assertThat;

/** Timestamps read through either pool as {@code Instant} are those the driver reads as {@code OffsetDateTime}. */
final class BinaryInstantCodecIntegrationTests extends IntegrationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String VALUES = """
            SELECT at, at AS same FROM (VALUES
                (now()), (timestamptz '2000-01-01 00:00:00+00'), (timestamptz '1970-01-01 00:00:00+00'),
                (timestamptz '1999-12-31 23:59:59.999999+00'), (timestamptz '1969-12-31 23:59:59.000001+00'),
                (timestamptz '1582-10-15 00:00:00+00'), (timestamptz '1582-10-04 23:59:59.5+00'),
                (timestamptz '1500-02-28 12:00:00+00'), (timestamptz '0001-01-01 00:00:00+00'),
                (timestamptz '4713-01-01 00:00:00+00 BC'), (timestamptz '9999-12-31 23:59:59.999999+00'),
                (timestamptz '294276-12-31 23:59:59.999999+00'), (timestamptz 'infinity'), (timestamptz '-infinity'),
                (NULL::timestamptz)
            ) v(at)
            UNION ALL
            SELECT at, at FROM (SELECT timestamptz '1000-01-01 00:00:00+00' + random() * interval '9000 years' AS at
                                FROM generate_series(1, 2000)) r
            """;

    @Autowired
    private DatabaseClient db;
    @Autowired
    private WorkerDatabase workerDatabase;

    @Test
    void bothPoolsReadEveryTimestampAsTheDriverDoes() {
        for (DatabaseClient client : List.of(db, workerDatabase.client())) {
            List<Map.Entry<String, String>> read = client.sql(VALUES)
                    .map(row -> Map.entry(String.valueOf(row.get("at", Instant.class)),
                            String.valueOf(toInstant(row.get("same", OffsetDateTime.class)))))
                    .all().collectList().block(PATIENCE);
            assertThat(read).hasSize(2015).allSatisfy(pair -> assertThat(pair.getKey()).isEqualTo(pair.getValue()));
        }
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

    private static Instant toInstant(OffsetDateTime value) {
        return value == null ? null : value.toInstant();
    }
}
