package dev.tasklane.schedule;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.queue.TaskStore;
import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler on virtual time: each test's schedules live in 2030 and later, where the
 * service's own scheduler (on the real clock) never finds them due, and rounds run when the test
 * says, at the instant the test sets.
 */
final class SchedulerIntegrationTests extends IntegrationTest {

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    private static final TasklaneProperties.Scheduler MINUTE_GRACE =
            new TasklaneProperties.Scheduler(Duration.ofSeconds(1), Duration.ofMinutes(1));

    @Autowired
    private ScheduleStore store;
    @Autowired
    private TaskStore tasks;

    private final List<String> created = new java.util.ArrayList<>();
    private String name;
    private String queue;

    /** Other tests' rounds run at later virtual times and would fire what this one leaves. */
    @org.junit.jupiter.api.AfterEach
    void deleteSchedules() {
        created.forEach(schedule -> store.delete(schedule).block(Duration.ofSeconds(10)));
    }

    @BeforeEach
    void setUp() {
        name = TaskFixtures.uniqueQueue("sched");
        queue = TaskFixtures.uniqueQueue("sched-q");
    }

    @Test
    void aDaily0230InBerlinFiresAtThreeOnTheSpringForwardDayAndOnceOnTheFallBackDay() {
        put("30 2 * * *", BERLIN, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, Instant.parse("2030-03-30T12:00:00Z"));
        runEvery(Duration.ofMinutes(20), Instant.parse("2030-03-30T12:00:00Z"), Instant.parse("2030-04-01T12:00:00Z"),
                Duration.ofHours(1));
        assertThat(scheduledFor()).containsExactly("2030-03-31T01:00:00Z", "2030-04-01T00:30:00Z");

        put("30 2 * * *", BERLIN, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, Instant.parse("2030-10-26T12:00:00Z"));
        runEvery(Duration.ofMinutes(20), Instant.parse("2030-10-26T12:00:00Z"), Instant.parse("2030-10-27T12:00:00Z"),
                Duration.ofHours(1));
        assertThat(scheduledFor()).containsExactly("2030-03-31T01:00:00Z", "2030-04-01T00:30:00Z",
                "2030-10-27T00:30:00Z");
    }

    @Test
    void anHourlyScheduleInNewYorkMakes23TasksOnTheSpringDayAnd25OnTheFallDay() {
        assertThat(tasksOnLocalDay(LocalDate.parse("2030-03-10"))).isEqualTo(23);
        assertThat(tasksOnLocalDay(LocalDate.parse("2030-11-03"))).isEqualTo(25);
    }

    @Test
    void afterAnHourWithNoReplicaCatchUpDecidesWhatTheMissedFireTimesMake() {
        Instant created = Instant.parse("2030-06-01T10:00:00Z");
        Instant back = Instant.parse("2030-06-01T11:02:00Z");
        String none = name + "-none";
        String latest = name + "-latest";
        String all = name + "-all";
        putNamed(none, "*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, created);
        putNamed(latest, "*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.LATEST, Schedule.Overlap.ALLOW, created);
        putNamed(all, "*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, created);

        round(back, MINUTE_GRACE);
        assertThat(scheduledFor(none)).isEmpty();
        assertThat(scheduledFor(latest)).containsExactly("2030-06-01T11:00:00Z");
        assertThat(scheduledFor(all)).hasSize(12).startsWith("2030-06-01T10:05:00Z").endsWith("2030-06-01T11:00:00Z");

        round(Instant.parse("2030-06-01T11:05:00Z"), MINUTE_GRACE); // on time again: every one makes its task
        assertThat(scheduledFor(none)).containsExactly("2030-06-01T11:05:00Z");
        assertThat(scheduledFor(latest)).hasSize(2);
        assertThat(scheduledFor(all)).hasSize(13);
    }

    @Test
    void catchUpAllMakesTheLatestHundredMissedFireTimes() {
        put("*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, Instant.parse("2030-06-01T10:00:00Z"));
        round(Instant.parse("2030-06-01T20:02:30Z"), MINUTE_GRACE); // 120 missed
        assertThat(scheduledFor()).hasSize(100).startsWith("2030-06-01T11:45:00Z").endsWith("2030-06-01T20:00:00Z");
    }

    @Test
    void missedFireTimesCountFromTheLastPutOrResume() {
        Instant created = Instant.parse("2030-06-01T10:00:00Z");
        put("*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, created);
        store.pause(name).block();
        store.resume(name, Instant.parse("2030-06-01T10:50:00Z")).block();
        round(Instant.parse("2030-06-01T11:02:00Z"), MINUTE_GRACE);
        assertThat(scheduledFor()).containsExactly("2030-06-01T10:55:00Z", "2030-06-01T11:00:00Z");

        put("*/5 * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, Instant.parse("2030-06-01T12:30:00Z"));
        round(Instant.parse("2030-06-01T12:47:00Z"), MINUTE_GRACE);
        assertThat(scheduledFor()).hasSize(5).endsWith("2030-06-01T12:35:00Z", "2030-06-01T12:40:00Z", "2030-06-01T12:45:00Z");
    }

    @Test
    void aPausedScheduleMakesNothing() {
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, Instant.parse("2030-06-01T10:00:00Z"));
        store.pause(name).block();
        round(Instant.parse("2030-06-01T10:10:00Z"), MINUTE_GRACE);
        assertThat(scheduledFor()).isEmpty();
        assertThat(store.find(name).block().definition().paused()).isTrue();
    }

    @Test
    void manyReplicasRacingAtEveryFireTimeMakeExactlyOneTaskEach() {
        Instant start = Instant.parse("2030-07-01T00:00:00Z");
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, start);
        for (int minute = 1; minute <= 20; minute++) {
            Instant now = start.plus(Duration.ofMinutes(minute));
            // five replicas, their clocks up to 20 s apart, all running a round at the fire time
            Flux.range(0, 5).flatMap(replica -> scheduler(now.plusSeconds(replica * 5L - 10), MINUTE_GRACE).round(), 5)
                    .collectList().block(Duration.ofSeconds(30));
        }
        List<String> made = scheduledFor();
        assertThat(made).doesNotHaveDuplicates().hasSize(20).startsWith("2030-07-01T00:01:00Z").endsWith("2030-07-01T00:20:00Z");
    }

    @Test
    void aReplicaWhoseClockRunsTwoGracesAheadNeitherDropsNorAdvancesAFireTime() {
        Instant start = Instant.parse("2030-12-01T00:00:00Z");
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, start);
        AtomicReference<Instant> database = new AtomicReference<>(start);
        Duration ahead = MINUTE_GRACE.misfireGrace().multipliedBy(2);
        List<String> due = new ArrayList<>();
        for (int seconds = 20; seconds <= 10 * 60; seconds += 20) {
            Instant now = start.plusSeconds(seconds);
            database.set(now);
            if (seconds % 60 == 0) {
                due.add(now.toString());
            }
            // one database, two replicas: one on its clock, one on a clock two graces ahead; each goes first in turn
            List<Duration> offsets = seconds % 40 == 0 ? List.of(Duration.ZERO, ahead) : List.of(ahead, Duration.ZERO);
            for (Duration offset : offsets) {
                new Scheduler(store, tasks, MINUTE_GRACE, Clock.fixed(now.plus(offset), ZoneOffset.UTC),
                        Mono.fromSupplier(database::get)).round().block(Duration.ofSeconds(30));
            }
            assertThat(scheduledFor()).as("at %s", now).containsExactlyElementsOf(due); // each once, none early
        }
    }

    @Test
    void deletingTheTasksNeverFreesAFireTimeToRunAgain() {
        Instant start = Instant.parse("2030-08-01T00:00:00Z");
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.ALL, Schedule.Overlap.ALLOW, start);
        round(start.plus(Duration.ofMinutes(5)), MINUTE_GRACE);
        assertThat(scheduledFor()).hasSize(5);

        Sql.update("DELETE FROM task WHERE schedule = ?", name);
        // a replica whose view of the schedule is old: as if nothing had been settled
        Sql.update("UPDATE schedule SET settled_until = ?, next_fire_at = ? WHERE name = ?",
                java.sql.Timestamp.from(start), java.sql.Timestamp.from(start), name);
        round(start.plus(Duration.ofMinutes(5)).plusSeconds(10), MINUTE_GRACE);
        assertThat(scheduledFor()).isEmpty();
    }

    @Test
    void aReplicaStoppedHalfWayThroughARoundLeavesTheFireTimeToTheNext() throws Exception {
        Instant start = Instant.parse("2030-09-01T00:00:00Z");
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, start);
        Instant fireTime = start.plus(Duration.ofMinutes(1));
        try (Connection stuck = TestDatabase.get().connect()) {
            stuck.setAutoCommit(false);
            // the stuck replica has locked the schedule and claimed the fire time, and then stops
            try (PreparedStatement lock = stuck.prepareStatement("SELECT 1 FROM schedule WHERE name = ? FOR UPDATE");
                 PreparedStatement claim = stuck.prepareStatement(
                         "INSERT INTO schedule_fire (schedule, fire_at, outcome) VALUES (?, ?, 'enqueued')")) {
                lock.setString(1, name);
                lock.executeQuery().close();
                claim.setString(1, name);
                claim.setTimestamp(2, java.sql.Timestamp.from(fireTime));
                claim.executeUpdate();
            }
            round(fireTime.plusSeconds(1), MINUTE_GRACE); // skips the locked schedule
            assertThat(scheduledFor()).isEmpty();
            stuck.rollback(); // the replica died: its transaction is gone
        }
        round(fireTime.plusSeconds(2), MINUTE_GRACE);
        round(fireTime.plusSeconds(3), MINUTE_GRACE);
        assertThat(scheduledFor()).containsExactly("2030-09-01T00:01:00Z");
    }

    @Test
    void overlapSkipMakesNoTaskWhileThePreviousOneIsNotTerminal() {
        Instant start = Instant.parse("2030-10-01T00:00:00Z");
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.SKIP, start);
        round(start.plus(Duration.ofMinutes(1)), MINUTE_GRACE);
        round(start.plus(Duration.ofMinutes(2)), MINUTE_GRACE);
        assertThat(scheduledFor()).containsExactly("2030-10-01T00:01:00Z");
        Schedule.LastFire skipped = store.find(name).block().lastFire();
        assertThat(skipped.outcome()).isEqualTo("skipped");
        assertThat(skipped.at()).isEqualTo(start.plus(Duration.ofMinutes(2)));

        Sql.update("UPDATE task SET state = 'succeeded', finished_at = now() WHERE schedule = ?", name);
        Sql.column("SELECT id FROM task WHERE schedule = ?", name).forEach(id -> TaskRows.follow(Long.parseLong(id)));
        round(start.plus(Duration.ofMinutes(3)), MINUTE_GRACE);
        assertThat(scheduledFor()).containsExactly("2030-10-01T00:01:00Z", "2030-10-01T00:03:00Z");
    }

    @Test
    void aScheduleThatCannotBeFiredDoesNotStopTheOthersAndIsTriedAgain() {
        Instant start = Instant.parse("2030-11-15T00:00:00Z");
        String broken = name + "-broken";
        putNamed(broken, "* * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, start.minusSeconds(1));
        put("* * * * *", ZoneOffset.UTC, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, start);
        // the broken one comes first in the round (earlier due), and its task cannot be read
        Sql.update("UPDATE schedule SET task = '{}' WHERE name = ?", broken);

        round(start.plus(Duration.ofMinutes(1)), MINUTE_GRACE);
        assertThat(scheduledFor()).containsExactly("2030-11-15T00:01:00Z");
        assertThat(scheduledFor(broken)).isEmpty();

        Sql.update("UPDATE schedule SET task = '{\"type\": \"t\", \"priority\": 0, \"maxAttempts\": 5,"
                + " \"timeoutSeconds\": 60}' WHERE name = ?", broken);
        round(start.plus(Duration.ofMinutes(1)).plusSeconds(20), MINUTE_GRACE);
        assertThat(scheduledFor(broken)).containsExactly("2030-11-15T00:01:00Z"); // nothing was settled by the failure
    }

    private int tasksOnLocalDay(LocalDate day) {
        name = TaskFixtures.uniqueQueue("sched");
        Instant from = day.atStartOfDay(NEW_YORK).toInstant().minusSeconds(1);
        Instant to = day.plusDays(1).atStartOfDay(NEW_YORK).toInstant().minusSeconds(1);
        put("0 * * * *", NEW_YORK, Schedule.CatchUp.NONE, Schedule.Overlap.ALLOW, from);
        runEvery(Duration.ofMinutes(20), from, to, Duration.ofHours(1));
        return scheduledFor().size();
    }

    private void runEvery(Duration step, Instant from, Instant to, Duration grace) {
        TasklaneProperties.Scheduler settings = new TasklaneProperties.Scheduler(Duration.ofSeconds(1), grace);
        for (Instant now = from.plus(step); !now.isAfter(to); now = now.plus(step)) {
            round(now, settings);
        }
        round(to, settings);
    }

    private int round(Instant now, TasklaneProperties.Scheduler settings) {
        return scheduler(now, settings).round().block(Duration.ofSeconds(30));
    }

    private Scheduler scheduler(Instant now, TasklaneProperties.Scheduler settings) {
        return new Scheduler(store, tasks, settings, Clock.fixed(now, ZoneOffset.UTC));
    }

    private void put(String cron, ZoneId zone, Schedule.CatchUp catchUp, Schedule.Overlap overlap, Instant now) {
        putNamed(name, cron, zone, catchUp, overlap, now);
    }

    private void putNamed(String schedule, String cron, ZoneId zone, Schedule.CatchUp catchUp, Schedule.Overlap overlap,
                          Instant now) {
        created.add(schedule);
        store.put(schedule, new Schedule.Definition(Cron.parse(cron), zone, queue,
                new TaskTemplate("t", "{\"report\": true}", 0, 5, 60, null), overlap, catchUp, false), now)
                .block(Duration.ofSeconds(10));
    }

    private List<String> scheduledFor() {
        return scheduledFor(name);
    }

    private static List<String> scheduledFor(String schedule) {
        return Sql.column("SELECT to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                + " FROM task WHERE schedule = ? ORDER BY scheduled_for", schedule);
    }
}
