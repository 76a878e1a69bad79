package dev.tasklane.bench;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.tasklane.queue.HotStatementCeiling;
import dev.tasklane.testsupport.ServiceProcess;
import dev.tasklane.testsupport.SseClient;
import dev.tasklane.testsupport.Sql;
import dev.tasklane.testsupport.TestDatabase;
import dev.tasklane.testsupport.TaskRows;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The benchmark: two replicas of the service as processes on a throwaway database, driven over
 * HTTP and SSE the way users drive them, and beside them the service's own hot statements run
 * bare (the ceiling). Writes {@code results.json}, {@code chart.svg} and {@code results.txt}.
 *
 * <p>Replica A works the burned-down queue and the pickup queue; replica B serves the SSE
 * subscribers (so delivery crosses replicas) and joins A on the scale-out queue.
 */
public final class Benchmark {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TOKEN = "bench-" + UUID.randomUUID();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final KeepAliveHttp LEAN_HTTP = new KeepAliveHttp(TOKEN);
    private static final int MIN_WARMUP_ROUNDS = 2;
    private static final double SETTLED_COMPILE_SHARE = 0.10;

    private final Sizes sizes;
    private final String run = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    private final List<Figure> figures = new ArrayList<>();
    private StatementTimes statementTimes;
    /** PostgreSQL's execution time per task by statement in the bare claim and complete loop. */
    private Map<String, Double> ceilingMicrosByStatement = Map.of();
    private double unlimitedBurnDown;

    private Benchmark(Sizes sizes) {
        this.sizes = sizes;
    }

    /** Runs every measurement and writes the results under {@code out}. */
    public static Results run(Sizes sizes, Path out) throws Exception {
        return new Benchmark(sizes).runAll(out);
    }

    private Results runAll(Path out) throws Exception {
        TestDatabase.Coordinates database = TestDatabase.get();
        String bench = "bench-" + run;
        String pickup = "pickup-" + run;
        String pickupBehindDelayed = "pickup-delayed-" + run;
        String streamed = "streamed-" + run;
        String scale = "scale-" + run;
        String warm = "warmup-" + run;
        String limited = "limited-" + run;
        String fair = "fair-" + run;
        int c = sizes.concurrency();
        CompletableFuture<ServiceProcess> startingA = CompletableFuture.supplyAsync(() -> start(Map.of(
                "TASKLANE_WORKER_QUEUES", bench + ":" + c + "," + streamed + ":" + c + "," + pickup + ":4,"
                        + pickupBehindDelayed + ":4," + scale + ":" + c + "," + warm + ":" + c + "," + limited + ":" + c
                        + "," + fair + ":" + c, "TASKLANE_HTTP_ALLOWED_HOSTS", "127.0.0.1"),
                "-Xmx1g"));
        CompletableFuture<ServiceProcess> startingB = CompletableFuture.supplyAsync(() -> start(Map.of(
                "TASKLANE_WORKER_QUEUES", scale + ":" + c + "," + warm + ":" + c), "-Xmx512m"));
        try (ServiceProcess a = startingA.join(); ServiceProcess b = startingB.join();
             HotStatementCeiling ceiling = new HotStatementCeiling(database.r2dbcUrl(), database.jdbcUrl(),
                     database.user(), database.password(), 4)) {
            try {
                step("warm-up");
                warmUp(a, b, warm);
                // The ceiling first: the same statements, batch sizes and database, nothing in between,
                // run once unmeasured so that this JVM's driver code is compiled as the replicas' is.
                step("ceiling: warm-up");
                String ceilingWarm = "ceiling-warm-" + run;
                ceiling.enqueue(ceilingWarm, sizes.tasks(), sizes.bulkBatch(), sizes.bulkInFlight());
                ceiling.process(ceilingWarm, 2, c);
                standInForAutovacuum();
                String ceilingQueue = "ceiling-" + run;
                step("ceiling: bare enqueue");
                double ceilingEnqueue = ceiling.enqueue(ceilingQueue, sizes.tasks(), sizes.bulkBatch(), sizes.bulkInFlight());
                step("ceiling: bare claim and complete");
                statementTimes = StatementTimes.ifAvailable();
                if (!statementTimes.available()) {
                    step("no time per statement: the server does not preload pg_stat_statements (.ci/bench starts one that does)");
                }
                statementTimes.reset();
                Cpu beforeCeiling = Cpu.sample(a.pid(), b.pid());
                double ceilingProcess = ceiling.process(ceilingQueue, 2, c);
                double ceilingPostgresMicros = Cpu.sample(a.pid(), b.pid()).minus(beforeCeiling).postgresMicrosPer(sizes.tasks());
                ceilingMicrosByStatement = microsPerTask(statementTimes.byStatement(), sizes.tasks());
                figures.add(new Figure("PostgreSQL CPU per task, bare claim and complete", "µs", ceilingPostgresMicros,
                        null, null, "the service's own statements, batches of " + c + ", two loops, nothing in between"));
                step("burn-down, one replica");
                burnDown(a, b, bench, ceilingEnqueue, ceilingProcess, ceilingPostgresMicros);
                step("burn-down, one replica, flow control");
                flowControlledBurnDowns(a, b, limited, fair);
                step("burn-down, one replica, streamed to a subscriber on the other");
                streamedBurnDown(a, b, streamed, ceilingProcess);
                step("single enqueue");
                singleEnqueue(a, b, ceilingEnqueue);
                step("idle pickup");
                pickup(a, pickup, "");
                step("burn-down, two replicas");
                scaleOut(a, b, scale, ceilingProcess);
                step("idle subscribers");
                idleSubscribers(b);
                step("claim cost");
                claimCostIsFlat(ceiling);
                step("idle pickup behind a delayed backlog");
                Sql.update("INSERT INTO task (queue, type, run_at) SELECT ?, 'noop', now() + interval '1 day'"
                        + " + g * interval '1 millisecond' FROM generate_series(1, ?) g", pickupBehindDelayed,
                        sizes.claimBacklog());
                TaskRows.followQueue(pickupBehindDelayed);
                // As autovacuum would after such an insert (the task table asks it to come after
                // 5 % of new rows): else the depth gauges' first scans of the backlog set the hint
                // bits of every new row, and those pages' writes land among the pickups.
                standInForAutovacuum();
                pickup(a, pickupBehindDelayed, String.format(", %,d delayed tasks waiting", sizes.claimBacklog()));
                step("cold start");
                coldStart(a, out);
            } finally {
                a.copyLog(out.resolve("replica-a.log"));
                b.copyLog(out.resolve("replica-b.log"));
            }
        }
        Results results = new Results(LocalDate.now().toString(), machine(), sizes, List.copyOf(figures));
        Report.write(results, out);
        return results;
    }

    // ---- the measurements

    /**
     * Works both replicas on every path measured later (bulk and single enqueue, claims and
     * completions, SSE delivery) until replica A's JIT has mostly done compiling them: on two
     * cores a cold replica spends a third of its CPU compiling for minutes, and the figures are
     * about a service that has run a while. At least {@link #MIN_WARMUP_ROUNDS} rounds; more
     * while A still spent over {@link #SETTLED_COMPILE_SHARE} of the last round compiling, up to
     * {@link Sizes#maxWarmupRounds()}. The rounds and the last share are reported with the figures.
     */
    private void warmUp(ServiceProcess a, ServiceProcess b, String queue) throws Exception {
        Disposable subscriber = new SseClient(b.port(), TOKEN).events("/api/v1/events?queue=" + queue, null).subscribe();
        try {
            int round = 0;
            double compileShare;
            do {
                double compiledBefore = metric(a, "jvm_compilation_time_ms_total");
                long started = System.nanoTime();
                post(a, "/api/v1/queues/" + queue + "/pause", null, 200);
                bulkEnqueue(a, queue, sizes.warmup() / 2);
                bulkEnqueue(b, queue, sizes.warmup() / 2);
                post(a, "/api/v1/queues/" + queue + "/resume", null, 200);
                // Single enqueues are measured on A only; their path takes the longest to compile.
                parallel(sizes.warmup() / 4, sizes.singlesInFlight(),
                        i -> post(a, "/api/v1/queues/" + queue + "/tasks", "{\"type\": \"noop\"}", 201));
                round++;
                awaitSucceeded(queue, round * (sizes.warmup() + sizes.warmup() / 4));
                compileShare = (metric(a, "jvm_compilation_time_ms_total") - compiledBefore)
                        / ((System.nanoTime() - started) / 1e6);
                step(String.format("warm-up round %d: replica A compiled %.0f%% of the time", round, 100 * compileShare));
            } while (round < MIN_WARMUP_ROUNDS
                    || (compileShare > SETTLED_COMPILE_SHARE && round < sizes.maxWarmupRounds()));
            figures.add(new Figure("warm-up before measuring", "rounds", round, null, null, String.format(
                    "%,d tasks and %,d single enqueues a round; replica A compiling %.0f%% of the last round",
                    sizes.warmup(), sizes.warmup() / 4, 100 * compileShare)));
        } finally {
            subscriber.dispose();
        }
    }

    /**
     * Bulk enqueue into a paused queue, then its burn-down, with nobody subscribed to events: the
     * way the peers are measured.
     */
    private void burnDown(ServiceProcess a, ServiceProcess b, String queue, double ceilingEnqueue, double ceilingProcess,
                          double ceilingPostgresMicros) throws Exception {
        standInForAutovacuum();
        post(a, "/api/v1/queues/" + queue + "/pause", null, 200);
        String beforeEnqueue = walPosition();
        double bulk = bulkEnqueue(a, queue, sizes.tasks());
        figures.add(new Figure("bulk enqueue (batches of " + sizes.bulkBatch() + ", " + sizes.bulkInFlight()
                + " in flight)", "tasks/s", bulk, ceilingEnqueue, ">= 1.5× graphile-worker's addJobs",
                "with their queued events"));
        double enqueueWal = walBytesSince(beforeEnqueue) / sizes.tasks();
        statementTimes.reset();
        String beforeBurnDown = walPosition();
        long[] updatesBefore = taskUpdates();
        BurnDown timed = resumeAndAwait(a, b, queue);
        double burnDownWal = walBytesSince(beforeBurnDown) / sizes.tasks();
        Thread.sleep(1500); // the replicas' backends report their table counters at most once a second
        long[] updatesAfter = taskUpdates();
        long updates = updatesAfter[0] - updatesBefore[0];
        figures.add(new Figure("HOT share of the task table's updates in that burn-down", "×",
                updates == 0 ? 0 : (double) (updatesAfter[1] - updatesBefore[1]) / updates, null, ">= 0.9",
                String.format("%,d updates", updates)));
        figures.add(new Figure("WAL per task: bulk enqueue + burn-down", "B", enqueueWal + burnDownWal, null,
                "<= graphile-worker's (about 600 B)", String.format("enqueue %.0f B, claim and outcome %.0f B;"
                        + " every write of the bench database in those phases", enqueueWal, burnDownWal)));
        Map<String, StatementTimes.Execution> executions = statementTimes.byStatement();
        Map<String, Double> byStatement = microsPerTask(executions, sizes.tasks());
        unlimitedBurnDown = sizes.tasks() / timed.seconds();
        figures.add(new Figure("burn-down, one replica (" + sizes.tasks() + " noop, concurrency "
                + sizes.concurrency() + ")", "tasks/s", unlimitedBurnDown, ceilingProcess,
                ">= 0.8× graphile-worker's batched mode", timed.describe()));
        double postgresMicros = timed.cpu().postgresMicrosPer(sizes.tasks());
        figures.add(new Figure("PostgreSQL CPU per task in that burn-down", "µs", postgresMicros, null, null,
                String.format("replica A: %.0f µs per task", timed.cpu().replicaAMicrosPer(sizes.tasks()))));
        figures.add(new Figure("PostgreSQL CPU per task, burn-down / bare statements", "×",
                postgresMicros / ceilingPostgresMicros, null, "<= 1.3", "every PostgreSQL process, from /proc"));
        byStatement.forEach((statement, micros) -> {
            if (micros >= 0.5) {
                figures.add(new Figure("PostgreSQL execution per task in that burn-down: " + statement, "µs", micros,
                        ceilingMicrosByStatement.get(statement), null,
                        String.format("pg_stat_statements, %,d executions; the ceiling column is the bare loop's",
                                executions.get(statement).calls())));
            }
        });
    }

    /**
     * The same burn-down on a queue with {@code maxRunning: 1000}, and on one with round-robin
     * fairness over 1,000 concurrency keys, each against the unlimited burn-down just before.
     */
    private void flowControlledBurnDowns(ServiceProcess a, ServiceProcess b, String limited, String fair)
            throws Exception {
        patch(a, limited, "{\"maxRunning\": 1000}");
        BurnDown capped = pausedBurnDown(a, b, limited, i -> "{\"type\": \"noop\"}");
        figures.add(new Figure("burn-down, maxRunning 1000 / without limits", "×",
                sizes.tasks() / capped.seconds() / unlimitedBurnDown, null, ">= 0.8",
                String.format("%,.0f tasks/s; ", sizes.tasks() / capped.seconds()) + capped.describe()));
        patch(a, fair, "{\"fairness\": \"round-robin\"}");
        BurnDown turns = pausedBurnDown(a, b, fair, i -> "{\"type\": \"noop\", \"concurrencyKey\": \"k" + (i % 1000) + "\"}");
        figures.add(new Figure("burn-down, round-robin over 1,000 keys / without limits", "×",
                sizes.tasks() / turns.seconds() / unlimitedBurnDown, null, ">= 0.6",
                String.format("%,.0f tasks/s; ", sizes.tasks() / turns.seconds()) + turns.describe()));
    }

    private BurnDown pausedBurnDown(ServiceProcess a, ServiceProcess b, String queue, IntFunction<String> item)
            throws Exception {
        standInForAutovacuum();
        post(a, "/api/v1/queues/" + queue + "/pause", null, 200);
        String batch = IntStream.range(0, sizes.bulkBatch()).mapToObj(item)
                .collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
        parallel(sizes.tasks() / sizes.bulkBatch(), sizes.bulkInFlight(),
                i -> post(a, "/api/v1/queues/" + queue + "/tasks/batch", batch, 201));
        return resumeAndAwait(a, b, queue);
    }

    private static void patch(ServiceProcess replica, String queue, String body) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + replica.port() + "/api/v1/queues/" + queue))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/merge-patch+json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("PATCH " + queue + ": " + response.statusCode() + " " + response.body());
        }
    }

    /** The same burn-down while replica B streams every {@code succeeded} event to a subscriber. */
    private void streamedBurnDown(ServiceProcess a, ServiceProcess b, String queue, double ceilingProcess)
            throws Exception {
        standInForAutovacuum();
        post(a, "/api/v1/queues/" + queue + "/pause", null, 200);
        bulkEnqueue(a, queue, sizes.tasks());
        Queue<Delivery> deliveries = new ConcurrentLinkedQueue<>();
        Disposable subscriber = new SseClient(b.port(), TOKEN)
                .events("/api/v1/events?queue=" + queue + "&events=succeeded", null)
                .subscribe(event -> deliveries.add(new Delivery(Long.parseLong(event.id()), System.nanoTime(),
                        Instant.now(), event.data())));
        CommitWatch commits = CommitWatch.start();
        double catchupsBefore;
        try {
            awaitMetric(b, "tasklane_sse_subscribers{stream=\"queue\"", 1); // the subscription is open on B
            catchupsBefore = metric(b, "tasklane_sse_catchups_total");
            BurnDown timed = resumeAndAwait(a, b, queue);
            figures.add(new Figure("burn-down, one replica, every event streamed by the other", "tasks/s",
                    sizes.tasks() / timed.seconds(), ceilingProcess, null, timed.describe()));
            awaitCount(deliveries, sizes.tasks(), Duration.ofSeconds(30));
        } finally {
            subscriber.dispose();
            commits.close();
        }
        List<Long> fromCommit = sorted(deliveries.stream().map(delivery -> {
            long visible = commits.visibleAt(delivery.eventId());
            return visible < 0 ? Long.MAX_VALUE : (delivery.nanoTime() - visible) / 1000;
        }).toList());
        List<Long> fromStart = sorted(deliveries.stream().map(d -> micros(d.transactionStart(), d.received())).toList());
        figures.add(new Figure("SSE delivery to the other replica under the burn-down, p50", "ms",
                percentile(fromCommit, 50) / 1000.0, null, null, "commit (seen by a 1 ms poller) → received"));
        figures.add(new Figure("SSE delivery to the other replica under the burn-down, p99", "ms",
                percentile(fromCommit, 99) / 1000.0, null, "<= 50", String.format(
                "%d of %d events within 30 s of the last; %.0f catch-ups from the table; from the event's"
                + " transaction start: p50 %.0f, p99 %.0f ms", fromCommit.size(), sizes.tasks(),
                metric(b, "tasklane_sse_catchups_total") - catchupsBefore,
                percentile(fromStart, 50) / 1000.0, percentile(fromStart, 99) / 1000.0)));
        deliverySplit(List.copyOf(deliveries));
    }

    /**
     * Where the server keeps commit timestamps ({@code .ci/bench} turns {@code
     * track_commit_timestamp} on; the shared server has it off, and then this adds nothing),
     * splits each SSE delivery at two instants of the database's clock, which is this machine's:
     * the event's own commit, and the moment it could first be delivered in order, once every
     * event with a lower id had committed. Of the delivery time, the part before that moment is
     * the ordering rule's (the reader may not hand an event out while a lower id may still
     * appear); the part after it is the reader's and the stream's.
     */
    private void deliverySplit(List<Delivery> deliveries) throws SQLException {
        if (deliveries.isEmpty()) {
            return;
        }
        Map<Long, long[]> commits = new HashMap<>(); // event id -> {own commit, in order}, epoch µs
        try (Connection connection = TestDatabase.get().connect()) {
            try (Statement show = connection.createStatement();
                 ResultSet setting = show.executeQuery("SHOW track_commit_timestamp")) {
                setting.next();
                if (!"on".equals(setting.getString(1))) {
                    return;
                }
            }
            long low = deliveries.stream().mapToLong(Delivery::eventId).min().orElseThrow();
            long high = deliveries.stream().mapToLong(Delivery::eventId).max().orElseThrow();
            try (PreparedStatement read = connection.prepareStatement("""
                    SELECT e.id, (extract(epoch FROM committed) * 1000000)::bigint,
                           (extract(epoch FROM max(committed) OVER (ORDER BY first_id)) * 1000000)::bigint
                    FROM (SELECT first_id, size AS events, pg_xact_commit_timestamp(xmin) AS committed
                          FROM task_event_batch WHERE first_id BETWEEN ? AND ?) b
                    CROSS JOIN LATERAL generate_series(b.first_id, b.first_id + b.events - 1) AS e(id)
                    ORDER BY e.id""")) {
                // From well below the first delivered id, so that the running maximum holds
                // every transaction that could still have been open when that one committed.
                read.setLong(1, Math.max(0, low - 100_000 * 4096L));
                read.setLong(2, high);
                try (ResultSet rows = read.executeQuery()) {
                    while (rows.next()) {
                        if (rows.getObject(2) != null) {
                            commits.put(rows.getLong(1), new long[] {rows.getLong(2), rows.getLong(3)});
                        }
                    }
                }
            }
        }
        List<Long> ownToReceived = new ArrayList<>();
        List<Long> ownToInOrder = new ArrayList<>();
        List<Long> inOrderToReceived = new ArrayList<>();
        for (Delivery delivery : deliveries) {
            long[] times = commits.get(delivery.eventId());
            if (times == null) {
                continue;
            }
            long received = delivery.received().getEpochSecond() * 1_000_000 + delivery.received().getNano() / 1000;
            ownToReceived.add(received - times[0]);
            ownToInOrder.add(times[1] - times[0]);
            inOrderToReceived.add(received - times[1]);
        }
        List<Long> own = sorted(ownToReceived);
        List<Long> waiting = sorted(ownToInOrder);
        List<Long> reader = sorted(inOrderToReceived);
        figures.add(new Figure("SSE delivery under the burn-down, own commit → received (commit timestamps), p99", "ms",
                percentile(own, 99) / 1000.0, null, null, String.format(
                "p50 %.1f ms, %d events; of it, waiting for every lower id to commit: p50 %.1f, p99 %.1f ms",
                percentile(own, 50) / 1000.0, own.size(), percentile(waiting, 50) / 1000.0,
                percentile(waiting, 99) / 1000.0)));
        figures.add(new Figure("SSE delivery under the burn-down, deliverable in order → received, p99", "ms",
                percentile(reader, 99) / 1000.0, null, null, String.format(
                "p50 %.1f ms: the event reader on the other replica and its stream", percentile(reader, 50) / 1000.0)));
    }

    /**
     * From {@code java -jar} (see {@link #jar()}) to the end of the first burn-down: a fresh replica whose queue
     * already holds the tasks (enqueued through replica A, which does not work that queue).
     */
    private void coldStart(ServiceProcess a, Path out) throws Exception {
        String queue = "cold-" + run;
        bulkEnqueue(a, queue, sizes.tasks());
        standInForAutovacuum();
        Instant started = Instant.now();
        try (ServiceProcess cold = start(Map.of("TASKLANE_WORKER_QUEUES", queue + ":" + sizes.concurrency()), "-Xmx1g")) {
            Instant served = Instant.now();
            Instant last = awaitSucceeded(queue, sizes.tasks());
            figures.add(new Figure("cold start: java to the end of the first burn-down of " + sizes.tasks(), "s",
                    Duration.between(started, last).toNanos() / 1e9, null, null, String.format(
                    "serving HTTP after %.1f s; %s", Duration.between(started, served).toNanos() / 1e9, launch())));
            cold.copyLog(out.resolve("replica-cold.log"));
        }
    }

    /** One event as the SSE subscriber received it (parsed afterwards, not on the subscriber's thread). */
    private record Delivery(long eventId, long nanoTime, Instant received, String data) {

        Instant transactionStart() {
            return Instant.parse(JSON.readTree(data).get("at").stringValue());
        }
    }

    private double bulkEnqueue(ServiceProcess a, String queue, int count) throws Exception {
        String batch = IntStream.range(0, sizes.bulkBatch()).mapToObj(i -> "{\"type\": \"noop\"}")
                .collect(Collectors.joining(",", "{\"tasks\": [", "]}"));
        int requests = count / sizes.bulkBatch();
        long started = System.nanoTime();
        parallel(requests, sizes.bulkInFlight(), i -> post(a, "/api/v1/queues/" + queue + "/tasks/batch", batch, 201));
        return requests * sizes.bulkBatch() / seconds(started);
    }

    private void singleEnqueue(ServiceProcess a, ServiceProcess b, double ceilingEnqueue) throws Exception {
        String queue = "singles-" + run;
        Cpu before = Cpu.sample(a.pid(), b.pid());
        long started = System.nanoTime();
        parallel(sizes.singles(), sizes.singlesInFlight(),
                i -> post(a, "/api/v1/queues/" + queue + "/tasks", "{\"type\": \"noop\"}", 201));
        double took = seconds(started);
        Cpu used = Cpu.sample(a.pid(), b.pid()).minus(before);
        figures.add(new Figure("single enqueue, " + sizes.singlesInFlight() + " in flight", "tasks/s",
                sizes.singles() / took, ceilingEnqueue, ">= 2× the faster peer's single add",
                "one task per request; " + used.describe(took)));
        figures.add(new Figure("replica CPU per single enqueue", "ms", used.replicaAMicrosPer(sizes.singles()) / 1000,
                null, "<= 0.2", ""));
    }

    /**
     * Tasks enqueued one at a time into an idle queue of replica A. Two spans: the peers' own, from
     * the enqueue call's return to the handler's start (the task is {@code http}: its request's
     * arrival at {@link HandlerProbe}, on the harness's clock); and createdAt → startedAt by the
     * database's clock, which also holds the enqueue's insert and commit but not the claim itself.
     * The warm-up works noop tasks only, so a first round of http tasks, unmeasured, warms their path.
     */
    private void pickup(ServiceProcess a, String queue, String behind) throws Exception {
        long pause = 1000L / sizes.pickupsPerSecond();
        long[] returnedNanos = new long[sizes.pickups()];
        int unmeasured = sizes.pickups();
        try (HandlerProbe probe = new HandlerProbe()) {
            parallel(unmeasured, 4, i -> post(a, "/api/v1/queues/" + queue + "/tasks", probe.task(-1), 201));
            awaitSucceeded(queue, unmeasured);
            for (int i = 0; i < sizes.pickups(); i++) {
                long started = System.nanoTime();
                post(a, "/api/v1/queues/" + queue + "/tasks", probe.task(i), 201);
                returnedNanos[i] = System.nanoTime();
                Thread.sleep(Math.max(0, pause - (returnedNanos[i] - started) / 1_000_000));
            }
            awaitSucceeded(queue, unmeasured + sizes.pickups());
            List<Long> returnedToHandler = new ArrayList<>();
            for (int i = 0; i < sizes.pickups(); i++) {
                Long arrived = probe.arrivedNanos(i);
                if (arrived == null) {
                    throw new IllegalStateException("task " + i + " of queue " + queue + " succeeded without calling the probe");
                }
                returnedToHandler.add((arrived - returnedNanos[i]) / 1000);
            }
            Collections.sort(returnedToHandler);
            figures.add(new Figure("idle pickup at " + sizes.pickupsPerSecond() + "/s" + behind + ", p50", "ms",
                    percentile(returnedToHandler, 50) / 1000.0, null, null, "enqueue call returned → handler started"));
            figures.add(new Figure("idle pickup at " + sizes.pickupsPerSecond() + "/s" + behind + ", p99", "ms",
                    percentile(returnedToHandler, 99) / 1000.0, null, "<= 5", returnedToHandler.size()
                            + " tasks; the handler's start is its http request's arrival at the harness"));
        }
        List<Long> micros = Sql.column("SELECT (extract(epoch FROM started_at - created_at) * 1000000)::bigint FROM"
                + " (SELECT * FROM task WHERE queue = ? AND state = 'succeeded' ORDER BY id OFFSET ?) measured ORDER BY 1",
                queue, unmeasured).stream().map(Long::parseLong).toList();
        figures.add(new Figure("idle pickup at " + sizes.pickupsPerSecond() + "/s" + behind + ", createdAt → startedAt, p50",
                "ms", percentile(micros, 50) / 1000.0, null, null, "database clock: the enqueue's transaction start → the claim's start"));
        figures.add(new Figure("idle pickup at " + sizes.pickupsPerSecond() + "/s" + behind + ", createdAt → startedAt, p99",
                "ms", percentile(micros, 99) / 1000.0, null, null, micros.size() + " tasks"));
    }

    private void scaleOut(ServiceProcess a, ServiceProcess b, String queue, double ceilingProcess) throws Exception {
        standInForAutovacuum();
        post(a, "/api/v1/queues/" + queue + "/pause", null, 200);
        bulkEnqueue(a, queue, sizes.tasks());
        BurnDown timed = resumeAndAwait(a, b, queue);
        figures.add(new Figure("burn-down, two replicas", "tasks/s", sizes.tasks() / timed.seconds(), ceilingProcess,
                null, timed.describe()));
    }

    /**
     * How long a paused queue's tasks took from its resume to the last one finished, the CPU used
     * meanwhile, and how many claims replica A made for them (fewer, larger claims are cheaper).
     */
    private record BurnDown(double seconds, Cpu cpu, double claimsOnA) {

        String describe() {
            return cpu.describe(seconds) + String.format("; A claimed in %.0f statements", claimsOnA);
        }
    }

    private BurnDown resumeAndAwait(ServiceProcess a, ServiceProcess b, String queue) throws Exception {
        String claims = "tasklane_claim_batch_size_count{queue=\"" + queue + "\"";
        double claimsBefore = metric(a, claims);
        Cpu before = Cpu.sample(a.pid(), b.pid());
        Instant resumed = Instant.now();
        post(a, "/api/v1/queues/" + queue + "/resume", null, 200);
        Instant last = awaitSucceeded(queue, sizes.tasks());
        Cpu used = Cpu.sample(a.pid(), b.pid()).minus(before);
        return new BurnDown(Duration.between(resumed, last).toNanos() / 1e9, used, metric(a, claims) - claimsBefore);
    }

    private void idleSubscribers(ServiceProcess b) throws Exception {
        String path = "/api/v1/events?queue=idle-" + run;
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < sizes.idleSubscribers(); i++) {
                Socket socket = new Socket();
                socket.connect(new InetSocketAddress("127.0.0.1", b.port()), 10_000);
                OutputStream request = socket.getOutputStream();
                request.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                        + "Authorization: Bearer " + TOKEN + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                request.flush();
                sockets.add(socket);
            }
            awaitMetric(b, "tasklane_sse_subscribers{stream=\"queue\"", sizes.idleSubscribers());
            double held = metric(b, "tasklane_sse_subscribers{stream=\"queue\"");
            new ProcessBuilder("jcmd", Long.toString(b.pid()), "GC.run").redirectErrorStream(true).start()
                    .waitFor(60, TimeUnit.SECONDS);
            double heapMb = metric(b, "jvm_memory_used_bytes{area=\"heap\"") / (1024 * 1024);
            figures.add(new Figure("idle SSE subscribers held by one replica (-Xmx512m)", "subscribers", held,
                    null, ">= 10,000", String.format("heap after a full GC: %.0f MB", heapMb)));
            figures.add(new Figure("heap with those subscribers, after a full GC", "MB", heapMb, null, "<= 512", ""));
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    private void claimCostIsFlat(HotStatementCeiling ceiling) throws Exception {
        String small = "claim-small-" + run;
        String big = "claim-big-" + run;
        String later = "claim-later-" + run;
        Sql.update("INSERT INTO task (queue, type) SELECT ?, 'noop' FROM generate_series(1, 1000)", small);
        Sql.update("INSERT INTO task (queue, type) SELECT ?, 'noop' FROM generate_series(1, ?)", big,
                sizes.claimBacklog());
        // 1,000 due tasks behind a backlog waiting for later: the claim must read the due ones only
        Sql.update("INSERT INTO task (queue, type) SELECT ?, 'noop' FROM generate_series(1, 1000)", later);
        Sql.update("INSERT INTO task (queue, type, run_at) SELECT ?, 'noop', now() + interval '1 day'"
                + " + g * interval '1 millisecond' FROM generate_series(1, ?) g", later, sizes.claimBacklog());
        List.of(small, big, later).forEach(TaskRows::followQueue);
        Sql.update("ANALYZE task");
        Sql.update("ANALYZE task_ready");
        int batch = Math.min(100, sizes.concurrency());
        ceiling.claimLatencies(small, batch, 20); // warm
        double smallP50 = percentileOfDurations(ceiling.claimLatencies(small, batch, 200), 50);
        double bigP50 = percentileOfDurations(ceiling.claimLatencies(big, batch, 200), 50);
        double laterP50 = percentileOfDurations(ceiling.claimLatencies(later, batch, 200), 50);
        String backlog = String.format("%,d", sizes.claimBacklog());
        figures.add(new Figure("claim of " + batch + " with 1,000 waiting, p50", "ms", smallP50, null, null, ""));
        figures.add(new Figure("claim of " + batch + " with " + backlog + " waiting, p50", "ms", bigP50, null, null, ""));
        figures.add(new Figure("claim cost, large backlog / small", "×", bigP50 / smallP50, null, "<= 1.5", ""));
        figures.add(new Figure("claim of " + batch + " with 1,000 due and " + backlog + " delayed, p50", "ms", laterP50,
                null, null, ""));
        figures.add(new Figure("claim cost, 1,000 due behind a delayed backlog / 1,000 due", "×", laterP50 / smallP50,
                null, "<= 1.5", ""));
        Sql.update("DELETE FROM task WHERE queue IN (?, ?, ?)", small, big, later);
        List.of(small, big, later).forEach(TaskRows::followQueue);
    }

    // ---- support

    /** The task table's updates so far, and how many of them were HOT. */
    private static long[] taskUpdates() {
        String[] counts = Sql.column("SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables"
                + " WHERE relid = 'task'::regclass").get(0).split(" ");
        return new long[] {Long.parseLong(counts[0]), Long.parseLong(counts[1])};
    }

    private static String walPosition() {
        return Sql.column("SELECT pg_current_wal_insert_lsn()::text").get(0);
    }

    /** WAL bytes written since {@code position}, the whole cluster's (the bench cluster has this database only). */
    private static double walBytesSince(String position) {
        return Double.parseDouble(Sql.column("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), CAST(? AS pg_lsn))",
                position).get(0));
    }

    private static Map<String, Double> microsPerTask(Map<String, StatementTimes.Execution> executions, int tasks) {
        Map<String, Double> micros = new java.util.LinkedHashMap<>();
        executions.forEach((statement, execution) -> micros.put(statement, execution.millis() * 1000 / tasks));
        return micros;
    }

    /**
     * This server runs with autovacuum off (its CI configuration). Autovacuum would clean up
     * between the phases (the task table asks it to come early); without it every figure pays
     * for the dead rows of the phases before it: a burn-down measured 6,000-6,700 tasks/s on a
     * table 40,000 processed tasks deep and 9,700 after a vacuum.
     */
    private static void standInForAutovacuum() {
        step("vacuum");
        Sql.update("VACUUM ANALYZE task, task_ready, task_event_batch");
    }

    private static void step(String what) {
        System.out.println(Instant.now() + " benchmark: " + what);
    }

    /**
     * The jar the replicas run with {@code java -jar}, as operators start the service: the bench
     * profile builds it first and names it in {@code tasklane.bench.jar}. Without it (the smoke
     * test, which runs before anything is packaged) they run from the test classpath.
     */
    private static @Nullable Path jar() {
        String named = System.getProperty("tasklane.bench.jar");
        if (named == null || named.isBlank()) {
            return null;
        }
        Path jar = Path.of(named);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("tasklane.bench.jar names " + jar + ", which does not exist: run the"
                    + " benchmark as ./mvnw -B -Pbench verify, which packages the jar before it");
        }
        return jar;
    }

    private static String launch() {
        return jar() != null ? "java -jar, no JVM flags beyond -Xmx1g" : "from the test classpath (no jar built: a smoke run)";
    }

    private static ServiceProcess start(Map<String, String> settings, String heap) {
        try {
            Map<String, String> all = new java.util.HashMap<>(settings);
            all.put("TASKLANE_API_TOKENS", TOKEN);
            return ServiceProcess.start(jar(), all, heap);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void post(ServiceProcess replica, String path, String body, int expected) {
        try {
            KeepAliveHttp.Response response = LEAN_HTTP.post(replica.port(), path, body);
            if (response.status() != expected) {
                List<String> log = replica.lines();
                throw new IllegalStateException(path + " answered " + response.status() + ": " + response.body()
                        + "\nthe replica's log ends:\n" + String.join("\n", log.subList(Math.max(0, log.size() - 80),
                        log.size())));
            }
        } catch (Exception e) {
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
    }

    private static double metric(ServiceProcess replica, String prefix) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + replica.port() + "/actuator/prometheus")).build(),
                HttpResponse.BodyHandlers.ofString());
        return response.body().lines().filter(line -> line.startsWith(prefix))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    private static void awaitMetric(ServiceProcess replica, String prefix, double atLeast) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (metric(replica, prefix) < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
    }

    /** Runs {@code count} calls on {@code threads} threads; fails if any call failed. */
    private static void parallel(int count, int threads, IntCall call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger next = new AtomicInteger();
        try {
            List<CompletableFuture<Void>> workers = IntStream.range(0, threads).mapToObj(t -> CompletableFuture.runAsync(() -> {
                for (int i; (i = next.getAndIncrement()) < count; ) {
                    call.run(i);
                }
            }, pool)).toList();
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface IntCall {
        void run(int i);
    }

    /**
     * Waits until {@code count} tasks of the queue succeeded; returns when the last one finished.
     * It polls only whether anything of the queue is still due or running (two probes of the
     * partial claim and running indexes), then reads the count and the end from the rows once: a
     * count over the queue's rows every poll cost PostgreSQL about 9 µs per task of a burn-down
     * (pg_stat_statements), which the figures would have charged to the service.
     */
    private static Instant awaitSucceeded(String queue, int count) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (System.nanoTime() < deadline) {
            // Due tasks only (the pickup queue also holds a million delayed ones), as a seek: every
            // task the harness enqueues has priority 0.
            boolean busy = "t".equals(Sql.column("SELECT EXISTS (SELECT 1 FROM task WHERE queue = ? AND state = 'queued'"
                    + " AND priority = 0 AND run_at <= now()) OR EXISTS (SELECT 1 FROM task WHERE queue = ?"
                    + " AND state = 'running')", queue, queue).get(0));
            if (!busy) {
                String[] parts = Sql.column("SELECT count(*) || ' ' || coalesce(to_char(max(finished_at) AT TIME ZONE 'UTC',"
                        + " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), '') FROM task WHERE queue = ? AND state = 'succeeded'", queue)
                        .get(0).split(" ");
                if (Integer.parseInt(parts[0]) < count) {
                    throw new IllegalStateException("queue " + queue + " is idle with " + parts[0] + " of " + count
                            + " tasks succeeded");
                }
                return Instant.parse(parts[1]);
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException("queue " + queue + " did not finish");
    }

    private static void awaitCount(Queue<?> samples, int count, Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (samples.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private static List<Long> sorted(Collection<Long> samples) {
        List<Long> list = new ArrayList<>(samples);
        Collections.sort(list);
        return list;
    }

    static double percentile(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static double percentileOfDurations(List<Duration> sorted, int p) {
        return percentile(sorted.stream().map(d -> d.toNanos()).toList(), p) / 1e6;
    }

    private static long micros(Instant from, Instant to) {
        return Duration.between(from, to).toNanos() / 1000;
    }

    private static double seconds(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1e9;
    }

    private static String machine() {
        return Runtime.getRuntime().availableProcessors() + " cores, Java " + System.getProperty("java.version")
                + ", PostgreSQL " + Sql.column("SHOW server_version").get(0) + " with stock settings";
    }

    /**
     * One figure.
     *
     * @param ceiling the same work done by the bare statements, where there is one
     * @param target the target, as text
     */
    public record Figure(String name, String unit, double value, Double ceiling, String target, String note) {

        public Double ratio() {
            return ceiling == null || ceiling == 0 ? null : value / ceiling;
        }
    }

    public record Results(String date, String machine, Sizes sizes, List<Figure> figures) {
    }
}
