package dev.tasklane.queue;

/**
 * Every statement on the {@code task} table, run only by {@link TaskStore}, each whole so that it
 * can be pasted into psql as it stands (those that append events once composed). A statement that
 * changes a task appends its events in the same statement, one {@code task_event_batch} row per
 * queue ({@link #appendEvents}): it takes its transaction id, then draws the batch's id
 * ({@link #batchPerQueue}, {@link #oneBatch}), then writes the task rows, each naming the batch of
 * its new event and, in {@code event_previous}, the batch of the one before (see V022). All but the enqueue also NOTIFY every
 * replica's event reader on {@code tasklane_events} (the channel the notifier listens on), from a
 * CTE {@code notified} that the final SELECT joins so that it runs: the NOTIFY then arrives at the
 * commit of its events, not after their rows have come back to this replica.
 *
 * <p>Every statement that acts for the holder of a lease names the lease ({@code lease_id}, drawn
 * by the claimer): a worker id alone cannot tell one claim of a task from the next.
 */
final class TaskSql {

    private TaskSql() {
    }

    /**
     * The first CTEs of a statement that appends events for the rows of CTE {@code candidates}
     * (which has a {@code queue} column), when it has any: takes the transaction's id, then draws a
     * batch id for each queue of them ({@code batches}). In that order, as V002 and V022 require;
     * the materialized CTEs make it so, since each reads the one before. A candidate that the
     * statement then leaves alone leaves a hole in the ids, which the event reader's proof covers.
     */
    private static String batchPerQueue(String candidates) {
        return """
                xact AS MATERIALIZED (
                    SELECT pg_current_xact_id() AS xid WHERE EXISTS (SELECT 1 FROM %1$s)
                ),
                batches AS MATERIALIZED (
                    SELECT q.queue, nextval('task_event_batch_seq') AS first_id
                    FROM (SELECT DISTINCT queue FROM %1$s) q CROSS JOIN xact
                ),
                """.formatted(candidates);
    }

    /**
     * Like {@link #batchPerQueue}, for a statement on one queue: {@code batch} is one row with the
     * batch id, drawn only when the query {@code anyCandidate} finds a row. The query must have
     * locked every row the statement will change by then (a count of a locking CTE reads it whole):
     * a statement that drew its id and then waited for a row's lock could write its event after a
     * later one's, and a task's events would no longer rise with its history.
     */
    private static String oneBatch(String anyCandidate) {
        return """
                xact AS MATERIALIZED (
                    SELECT pg_current_xact_id() AS xid WHERE EXISTS (%s)
                ),
                batch AS MATERIALIZED (
                    SELECT nextval('task_event_batch_seq') AS first_id FROM xact
                ),
                """.formatted(anyCandidate);
    }

    /**
     * {@link #oneBatch} for a statement that changes the rows of the locking CTE {@code locking}:
     * counting them reads the CTE whole, so every row is locked before the id is drawn.
     */
    private static String oneBatchAfterLocking(String locking) {
        return oneBatch("SELECT 1 FROM (SELECT count(*) AS locked FROM " + locking + ") n WHERE n.locked > 0");
    }

    /**
     * The CTE {@code events}: appends one event for each row of CTE {@code source} (task rows as
     * written, naming their batch in {@code event_batch}), one batch row per batch id, the event
     * named by the SQL expression {@code name} with the detail {@code detail}. The rows are fed in
     * the order of their ids; every array of a batch is built by the same aggregation, so the
     * arrays stay aligned whatever that order.
     */
    private static String appendEvents(String source, String name, String detail) {
        return """
                events AS (
                    INSERT INTO task_event_batch (first_id, queue, size, task_ids, names, attempts, task_types,
                                                  concurrency_keys, schedules, scheduled_fors, details, previous)
                    SELECT event_batch, queue, count(*), array_agg(id), array_agg(CAST(%2$s AS text)), array_agg(attempt), array_agg(type),
                           CASE WHEN count(nullif(concurrency_key, '')) > 0 THEN array_agg(nullif(concurrency_key, '')) END,
                           CASE WHEN count(schedule) > 0 THEN array_agg(schedule) END,
                           CASE WHEN count(scheduled_for) > 0 THEN array_agg(scheduled_for) END,
                           array_agg(%3$s), array_agg(event_previous)
                    FROM (SELECT * FROM %1$s ORDER BY event_batch, id) written
                    GROUP BY event_batch, queue
                )
                """.formatted(source, name, detail);
    }

    /** The detail of a {@code queued} event: when the task is due, and the error it is retried after. */
    private static final String QUEUED_DETAIL =
            "jsonb_build_object('runAt', to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'error', last_error)";

    /** A ready row's columns (V023), named as the task's. */
    private static final String READY_COLUMNS = "id, queue, type, priority, run_at, concurrency_key, created_at, debounce_key";

    /** The CTE {@code readied} of an enqueue: the new tasks' ready rows (V023), so that claims find them. */
    private static final String READY_NEW = """
            readied AS (
                INSERT INTO task_ready (%1$s)
                SELECT %1$s FROM inserted
            )""".formatted(READY_COLUMNS);

    /**
     * The CTE {@code readied}: a ready row (V023) for each row of CTE {@code source} (task rows as
     * written) that is queued now, so that claims find it. A ready row left behind (see
     * {@link #FORGET_STRAY_ROWS}) is written over, never a reason to fail.
     */
    private static String enterReady(String source) {
        return """
                readied AS (
                    INSERT INTO task_ready (%2$s)
                    SELECT %2$s FROM %1$s WHERE state = 'queued'
                    ON CONFLICT (id) DO UPDATE
                    SET queue = EXCLUDED.queue, type = EXCLUDED.type, priority = EXCLUDED.priority,
                        run_at = EXCLUDED.run_at, concurrency_key = EXCLUDED.concurrency_key,
                        created_at = EXCLUDED.created_at, debounce_key = EXCLUDED.debounce_key
                )""".formatted(source, READY_COLUMNS);
    }

    /**
     * The CTE {@code stopped}: deletes the running rows (V023) of the rows of CTE {@code source}
     * (with the task's id, queue and concurrency key) that meet {@code condition}: tasks that were
     * running and no longer are.
     */
    private static String leaveRunning(String source, String condition) {
        return """
                stopped AS (
                    DELETE FROM task_running r USING %s s
                    WHERE %s AND r.queue = s.queue AND r.concurrency_key = s.concurrency_key AND r.id = s.id
                )""".formatted(source, condition);
    }

    /**
     * Inserts a batch of tasks for one queue and their {@code queued} events; returns the rows it
     * inserted with their position in the batch ({@code ord}, from 1). Rows whose idempotency key
     * already exists on the queue are skipped, not returned. Ids are drawn before the insert so
     * that each returned row can be matched to its request by id, whatever order RETURNING uses.
     * Locks: the inserted rows only (and waits on a concurrent insert of the same key). Unlike
     * the statements below it sends no NOTIFY: a NOTIFY holds a database-wide lock until its
     * transaction has committed, which would queue concurrent enqueues' commits one behind the
     * other; the event log sends one NOTIFY for many enqueues after they return.
     */
    static final String ENQUEUE_MANY = """
            WITH
            """ + oneBatch("SELECT 1") + """
            input AS MATERIALIZED (
                SELECT nextval(pg_get_serial_sequence('task', 'id')) AS id, i.*
                FROM unnest(:types::text[], :payloads::text[], :priorities::smallint[], :runAts::text[],
                            :delaysMs::bigint[], :maxAttempts::integer[], :keys::text[], :timeouts::integer[],
                            :concurrencyKeys::text[], :maxSnoozes::integer[], :uniqueKeys::text[],
                            :debounceKeys::text[], :debounceMaxMs::bigint[], :schedules::text[],
                            :scheduledFors::text[], :traceparents::text[])
                     WITH ORDINALITY
                     AS i(type, payload, priority, run_at, delay_ms, max_attempts, idempotency_key, timeout_seconds,
                          concurrency_key, max_snoozes, unique_key, debounce_key, debounce_max_ms, schedule,
                          scheduled_for, traceparent, ord)
            ),
            inserted AS (
                INSERT INTO task (id, queue, type, payload, priority, run_at, max_attempts, idempotency_key,
                                  timeout_seconds, concurrency_key, max_snoozes, unique_key, debounce_key,
                                  debounce_until, schedule, scheduled_for, traceparent, event_batch)
                OVERRIDING SYSTEM VALUE
                SELECT id, :queue, type, payload::jsonb, priority,
                       coalesce(run_at::timestamptz, statement_timestamp() + delay_ms * interval '1 millisecond'),
                       max_attempts, idempotency_key, timeout_seconds, concurrency_key, max_snoozes, unique_key,
                       debounce_key, statement_timestamp() + debounce_max_ms * interval '1 millisecond', schedule,
                       scheduled_for::timestamptz, traceparent, batch.first_id
                FROM input CROSS JOIN batch
                ORDER BY ord
                ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
                RETURNING *
            ),
            """ + appendEvents("inserted", "'queued'", QUEUED_DETAIL) + ",\n" + READY_NEW + "\n" + """
            SELECT input.ord, inserted.*
            FROM inserted JOIN input USING (id)
            """;

    /**
     * Takes the transaction-level advisory lock of each (queue, kind, key) that the tasks at the
     * same positions of the arrays name (kind null: no guard), in one fixed order so that two
     * enqueues cannot deadlock; answers each guarded position (from 1) with its key. A unique task
     * without a key gets the SHA-256 of its type and its payload as jsonb prints it, in which key
     * order and spacing are normalized.
     */
    static final String LOCK_GUARD_KEYS = """
            WITH input AS (
                SELECT ord, kind,
                       coalesce(key, 'sha256:' || encode(sha256(convert_to(
                           type || chr(10) || coalesce(payload::jsonb::text, 'null'), 'UTF8')), 'hex')) AS key
                FROM unnest(:kinds::text[], :keys::text[], :types::text[], :payloads::text[])
                     WITH ORDINALITY AS i(kind, key, type, payload, ord)
                WHERE kind IS NOT NULL
            ),
            locked AS (
                SELECT count(pg_advisory_xact_lock(hashtextextended(:queue || chr(31) || kind || chr(31) || key, 0)))
                FROM (SELECT DISTINCT kind, key FROM input ORDER BY kind, key) k
            )
            SELECT input.ord, input.key FROM input CROSS JOIN locked
            """;

    /** The newest task of a queue with a unique key that is within a unique scope, if any. */
    static final String FIND_UNIQUE = """
            SELECT * FROM task
            WHERE queue = :queue AND unique_key = :key
              AND CASE :scope
                      WHEN 'waiting' THEN state = 'queued' AND started_at IS NULL
                      WHEN 'active' THEN state IN ('queued', 'running')
                      ELSE created_at > clock_timestamp() - :windowSeconds * interval '1 second'
                  END
            ORDER BY id DESC
            LIMIT 1
            """;

    /**
     * A debounced enqueue that finds the key's task still waiting (queued, never started): replaces
     * its payload and moves its run to now + the delay, never past its debounce_until (least()
     * ignores a null bound), and its ready row with it; writes a queued event with the new runAt.
     * The task is found through the ready rows' debounce index (V023) and locked with its
     * conditions in the locking query, which PostgreSQL tests again on the newest version: a claim
     * that holds the row makes this wait and then find it running, so nothing is moved; a task a
     * released claim has just queued again, never started, is found though its new ready row is
     * younger than this statement, and that row is written over. A claim that holds only the ready
     * row skips the task row this holds, and this waits for it.
     */
    static final String DEBOUNCE = """
            WITH target AS MATERIALIZED (
                SELECT t.id FROM task_ready r JOIN task t ON t.id = r.id
                WHERE r.queue = :queue AND r.debounce_key = :key AND t.state = 'queued' AND t.started_at IS NULL
                ORDER BY r.id DESC
                LIMIT 1
                FOR UPDATE OF t
            ),
            """ + oneBatch("SELECT 1 FROM target") + """
            changed AS (
                UPDATE task t
                SET payload = :payload::jsonb,
                    run_at = least(statement_timestamp() + :delayMs * interval '1 millisecond', t.debounce_until),
                    event_previous = t.event_batch, event_batch = batch.first_id
                FROM target CROSS JOIN batch
                WHERE t.id = target.id
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'queued'", """
                    jsonb_build_object('runAt', to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                       'error', null, 'debounced', true)""") + ",\n" + enterReady("changed") + "\n" + """
            SELECT * FROM changed
            """;

    /** The existing tasks that hold some idempotency keys of a queue. Locks nothing. */
    static final String FIND_BY_KEYS = """
            SELECT * FROM task WHERE queue = :queue AND idempotency_key = ANY(:keys::text[])
            """;

    /** One task by id. Locks nothing. */
    static final String FIND_BY_ID = "SELECT * FROM task WHERE id = :id";

    /**
     * A page of tasks, newest first, bounded twice: by :limit rows and by :maxBytes of payloads and
     * results as JSON text (a page ends before the row that would pass the budget, but holds at
     * least one); {@code page_rows} says how many rows the page had before that cut. The filter
     * conditions go between the prefix and the suffix as {@code AND ...} (see {@link TaskStore}).
     */
    static final String LIST_PREFIX = """
            SELECT * FROM (
                SELECT p.*, count(*) OVER () AS page_rows, sum(p.row_bytes) OVER (ORDER BY p.id DESC) - p.row_bytes
                           AS bytes_before
                FROM (SELECT t.*, coalesce(octet_length(t.payload::text), 0) + coalesce(octet_length(t.result::text), 0)
                                  + 500 AS row_bytes
                      FROM task t
                      WHERE true""";

    static final String LIST_SUFFIX = """

                      ORDER BY t.id DESC
                      LIMIT :limit) p
            ) page
            WHERE bytes_before = 0 OR bytes_before < :maxBytes
            ORDER BY id DESC
            """;

    /**
     * Retention of deleted tasks: deletes up to :limit tombstones whose task finished before
     * :before. Their events go with the batches that hold them ({@link #PRUNE_OLD}).
     */
    static final String PRUNE_TOMBSTONES = """
            WITH doomed AS (
                SELECT task_id FROM task_tombstone
                WHERE finished_at < :before
                ORDER BY finished_at
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ),
            tombstones AS (
                DELETE FROM task_tombstone t USING doomed d WHERE t.task_id = d.task_id RETURNING t.task_id
            )
            SELECT count(*) AS pruned FROM tombstones
            """;

    /**
     * Retention of tasks and events, one round: walks the event batches after the batch :after in
     * id order until it has seen :limit events (at least one batch), and of those written before
     * :before deletes every task they name that finished before :before, then every batch none of
     * whose tasks is left. Finished tasks have no index of their own (an index on the finish time
     * would keep the outcome's update from being HOT, see V023): the batch that holds a task's
     * first event is at least as old as the task, so walking batches oldest first finds every task
     * that finished long enough ago. A task still waiting or running (or finished since) keeps
     * every batch that holds one of its events, since its own stream replays them. The tasks are
     * locked SKIP LOCKED with their conditions in the locking query, which PostgreSQL checks again
     * on the newest version of a row it locks: one that a retry is queueing again, or another
     * replica is pruning, stays, and so do its batches, for a later round. Raises the event log's
     * pruned-through mark in the same transaction. Answers how many tasks and batches it deleted,
     * how many batches it looked at, how many of those were old enough, and the last it looked at:
     * the caller goes on after that one while all were.
     */
    static final String PRUNE_OLD = """
            WITH RECURSIVE walk AS (
                (SELECT first_id, CAST(size AS bigint) AS seen FROM task_event_batch
                 WHERE first_id > :after ORDER BY first_id LIMIT 1)
                UNION ALL
                SELECT n.first_id, w.seen + n.size
                FROM walk w CROSS JOIN LATERAL (
                    SELECT b.first_id, b.size FROM task_event_batch b
                    WHERE b.first_id > w.first_id ORDER BY b.first_id LIMIT 1
                ) n
                WHERE w.seen < :limit
            ),
            examined AS MATERIALIZED (
                SELECT b.first_id, b.at < :before AS old, b.task_ids FROM task_event_batch b
                WHERE b.first_id = ANY (ARRAY(SELECT first_id FROM walk))
            ),
            finished AS MATERIALIZED (
                SELECT t.id FROM task t
                WHERE t.id = ANY (ARRAY(SELECT DISTINCT unnest(task_ids) FROM examined WHERE old))
                  AND t.state IN ('succeeded', 'failed', 'cancelled') AND t.finished_at < :before
                ORDER BY t.id
                FOR UPDATE SKIP LOCKED
            ),
            tasks AS (
                DELETE FROM task t WHERE t.id = ANY (ARRAY(SELECT id FROM finished)) RETURNING t.id
            ),
            doomed AS MATERIALIZED (
                SELECT b.first_id FROM task_event_batch b
                WHERE b.first_id = ANY (ARRAY(SELECT first_id FROM examined WHERE old))
                  AND NOT EXISTS (SELECT 1 FROM task t
                                  WHERE t.id = ANY (b.task_ids) AND t.id <> ALL (ARRAY(SELECT id FROM finished)))
                ORDER BY b.first_id
                FOR UPDATE SKIP LOCKED
            ),
            deleted AS (
                DELETE FROM task_event_batch b USING doomed d WHERE b.first_id = d.first_id
                RETURNING b.first_id + b.size - 1 AS last_id
            ),
            marked AS (
                UPDATE event_retention SET pruned_through = greatest(pruned_through, (SELECT max(last_id) FROM deleted))
                WHERE EXISTS (SELECT 1 FROM deleted)
            )
            SELECT (SELECT count(*) FROM tasks) AS tasks,
                   (SELECT count(*) FROM deleted) AS pruned,
                   (SELECT count(*) FROM examined) AS examined,
                   (SELECT count(*) FROM examined WHERE old) AS old,
                   (SELECT max(first_id) FROM examined) AS last_examined
            """;

    /** The state of one task, to explain why a conditional change did nothing. */
    static final String STATE_OF = "SELECT state FROM task WHERE id = :id";

    /**
     * Claims up to :limit due tasks of a queue that is not paused, in claim order (priority, then
     * run_at, then id), for one worker under the lease :leaseId; returns them. It reads only due
     * rows, however many wait in the future: it walks the claim index from one distinct priority
     * to the next (a seek each), and for each reads rows with run_at up to now only, as an index
     * bound, locking them as it goes and stopping after :limit. Locks: the claimed rows; skips rows
     * locked by anyone else. The lease never outlasts the attempt's timeout. Returns the tasks in
     * claim order.
     *
     * <p>Flow control: a queue that has it is refused unless :underLock says the claim holds the
     * queue's row lock ({@link QueueSql#LOCK_FOR_CLAIM}) in an earlier statement of its
     * transaction, where {@link #CLAIM_BUDGET} also cut :limit to what the limits leave; then the
     * claim records what it started, for the rate (:rateCount not null). Times are the statement's
     * start, not the transaction's: under the lock, they rise in the order the claims ran, so
     * startedAt shows the rate as the limit counted it. Only claims by concurrency key still take
     * that path; the others claim in one call, {@link #CLAIM_UNDER_FLOW}.
     *
     * <p>The claim runs in a function of migration V018 whose statement keeps one generic plan per
     * session and is never JIT-compiled: sent as a prepared statement, PostgreSQL planned it anew
     * for every claim, 0.5-0.9 ms of planning for an idle queue's claim that then ran in 0.1-0.2 ms.
     */
    static final String CLAIM_ANY_TYPE = """
            SELECT * FROM tasklane_claim_any_type(:queue, :limit, :workerId, :leaseId, :leaseMs, :underLock,
                                                  CAST(:rateCount AS integer), CAST(:ratePeriodMs AS bigint))
            """;

    /**
     * Like {@link #CLAIM_ANY_TYPE}, but only tasks of the types in :types (each named once). For
     * each distinct priority of the queue (one seek each), it reads the due rows of each wanted
     * type from the typed claim index (run_at up to now as a bound), so that due tasks of other
     * types cost nothing; the rows of one priority are merged by run_at and id. "Queued" is said
     * as a range, which only that index's predicate matches (see migration V010): given the choice
     * of task_claim_idx, the planner walked a queue of one type once per absent type. The price:
     * within the priority that fills the batch, each wanted type may lock up to :limit rows that
     * the merge then leaves out; they stay queued, and claimers running at that instant skip them.
     */
    static final String CLAIM_OF_TYPES = """
            SELECT * FROM tasklane_claim_of_types(:queue, :types::text[], :limit, :workerId, :leaseId, :leaseMs,
                                                  :underLock, CAST(:rateCount AS integer), CAST(:ratePeriodMs AS bigint))
            """;

    /**
     * Claims from a queue with flow control that counts the queue as a whole (:maxRunning, a
     * rate), in one call of a function of migration V019: it takes the queue's row lock, answers
     * nothing if the queue is paused, cuts :limit to what the limits leave, counted after the lock
     * was taken, and claims as {@link #CLAIM_ANY_TYPE} does (of :types only, unless null), with
     * the moment the lock was taken as the tasks' start and the rate's: so start times rise in the
     * order the claims held the lock, however long one waited for it. Refuses with SQLSTATE
     * {@value #LIMITS_BY_KEY}, claiming nothing, when the queue's limits go by concurrency key.
     * One round trip instead of the five of a transaction of lock, budget and claim: on a busy
     * queue the claims follow each other under the lock, so their round trips set its pace.
     */
    static final String CLAIM_UNDER_FLOW = """
            SELECT * FROM tasklane_claim_under_flow(:queue, CAST(:types AS text[]), :limit, :workerId, :leaseId, :leaseMs)
            """;

    /** What {@link #CLAIM_UNDER_FLOW} refuses with when the queue's limits go by concurrency key. */
    static final String LIMITS_BY_KEY = "TLKEY";

    /**
     * How many tasks a claim on a flow-controlled queue may start now: :limit, cut to the queue's
     * free slots (:maxRunning less its running tasks) and to what its rate leaves (:rateCount less
     * the tasks that claims started within :ratePeriodMs before this statement began). Run under
     * the queue's row lock, in a statement of its own that began once the lock was held, so that
     * every claim that held the lock before is counted. Locks nothing.
     */
    static final String CLAIM_BUDGET = """
            SELECT greatest(0, least(:limit,
                CASE WHEN CAST(:maxRunning AS integer) IS NULL THEN NULL
                     ELSE :maxRunning - (SELECT count(*) FROM task_running WHERE queue = :queue) END,
                CASE WHEN CAST(:rateCount AS integer) IS NULL THEN NULL
                     ELSE :rateCount - (SELECT coalesce(sum(s.tasks), 0) FROM queue_claim_start s
                                        WHERE s.queue = :queue AND s.started_at > statement_timestamp()
                                              - :ratePeriodMs * interval '1 millisecond') END))::integer AS n
            """;

    /**
     * Claims from a queue whose flow control goes by concurrency key (:maxRunningPerKey,
     * :ratePerKeyCount, or :roundRobin), under the queue's row lock taken by an earlier statement
     * of the transaction, for at most :limit tasks (already cut by {@link #CLAIM_BUDGET}). It walks the
     * keys that have waiting tasks (a seek each, in key order, the group without a key as '');
     * gives each key room for its free slots and the rest of its rate; reads up to that many due
     * tasks of each key in the key's claim order (round-robin: only its share of the budget, so
     * that the rows read stay near the budget however many keys wait); and picks from them either
     * in claim order across the queue (fifo) or turn by turn: every key's first task, keys in order
     * starting after the key that had the last turn (queue.last_key), then every key's second, and
     * so on. Only the picked rows are locked, SKIP LOCKED for the few that a cancel holds; no other
     * claimer reads this queue meanwhile. The picked rows are found by id from an array, whatever
     * the planner guesses of their number. Waiting tasks are read from their ready rows (V023), by
     * the key index there. A task's run_at is read against the transaction's start.
     */
    static final String CLAIM_BY_KEY = """
            WITH RECURSIVE keys AS (
                (SELECT concurrency_key AS k FROM task_ready
                 WHERE queue = :queue
                   AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = :queue AND q.paused)
                 ORDER BY concurrency_key LIMIT 1)
                UNION ALL
                SELECT (SELECT w.concurrency_key FROM task_ready w
                        WHERE w.queue = :queue AND w.concurrency_key > keys.k
                        ORDER BY w.concurrency_key LIMIT 1)
                FROM keys WHERE keys.k IS NOT NULL
            ),
            turns AS MATERIALIZED (
                SELECT k, row_number() OVER (ORDER BY CAST(:lastKey AS text) IS NOT NULL AND k <= :lastKey, k) AS turn,
                       count(*) OVER () AS keys
                FROM keys WHERE k IS NOT NULL
            ),
            rooms AS MATERIALIZED (
                SELECT t.k, t.turn,
                       greatest(0, least(
                           CASE WHEN :roundRobin THEN ceil(CAST(:limit AS numeric) / t.keys)::bigint
                                ELSE :limit END,
                           :maxRunningPerKey - coalesce(r.running, 0),
                           :ratePerKeyCount - coalesce(s.started, 0))) AS room
                FROM turns t
                LEFT JOIN (SELECT concurrency_key, count(*) AS running FROM task_running
                           WHERE CAST(:maxRunningPerKey AS integer) IS NOT NULL AND queue = :queue
                           GROUP BY concurrency_key) r ON r.concurrency_key = t.k
                LEFT JOIN (SELECT concurrency_key, sum(tasks) AS started FROM queue_claim_start
                           WHERE CAST(:ratePerKeyCount AS integer) IS NOT NULL AND queue = :queue
                             AND started_at > statement_timestamp() - :ratePerKeyPeriodMs * interval '1 millisecond'
                           GROUP BY concurrency_key) s ON s.concurrency_key = t.k
            ),
            candidates AS MATERIALIZED (
                SELECT c.id, c.priority, c.run_at, r.k, r.turn, c.rank
                FROM rooms r CROSS JOIN LATERAL (
                    SELECT w.id, w.priority, w.run_at,
                           row_number() OVER (ORDER BY w.priority DESC, w.run_at, w.id) AS rank
                    FROM task_ready w
                    WHERE w.queue = :queue AND w.concurrency_key = r.k AND w.run_at <= now()
                      AND (cardinality(CAST(:types AS text[])) = 0 OR w.type = ANY(CAST(:types AS text[])))
                    ORDER BY w.priority DESC, w.run_at, w.id
                    LIMIT r.room
                ) c
                WHERE r.room > 0
            ),
            chosen AS MATERIALIZED (
                SELECT id, k, turn, rank FROM candidates
                ORDER BY CASE WHEN :roundRobin THEN rank END, CASE WHEN :roundRobin THEN turn END,
                         priority DESC, run_at, id
                LIMIT :limit
            ),
            ready AS MATERIALIZED (
                SELECT w.id FROM task_ready w
                WHERE w.id = ANY (ARRAY(SELECT id FROM chosen))
                ORDER BY w.id
                FOR UPDATE SKIP LOCKED
            ),
            next AS MATERIALIZED (
                SELECT t.id FROM task t
                WHERE t.id = ANY (ARRAY(SELECT id FROM ready))
                ORDER BY t.id
                FOR UPDATE OF t SKIP LOCKED
            ),
            orphans AS MATERIALIZED (
                SELECT w.id FROM ready w LEFT JOIN next n USING (id)
                WHERE n.id IS NULL AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = w.id)
            ),
            """ + oneBatchAfterLocking("next") + """
            changed AS (
                UPDATE task t
                SET state = 'running', worker_id = :workerId, lease_id = :leaseId, attempt = t.attempt + 1,
                    started_at = statement_timestamp(),
                    timeout_at = statement_timestamp() + t.timeout_seconds * interval '1 second',
                    lease_expires_at = least(statement_timestamp() + :leaseMs * interval '1 millisecond',
                                             statement_timestamp() + t.timeout_seconds * interval '1 second'),
                    progress_percent = NULL, progress_message = NULL,
                    event_previous = t.event_batch, event_batch = batch.first_id
                FROM batch
                WHERE t.id = ANY (ARRAY(SELECT id FROM next)) AND t.state = 'queued'
                RETURNING t.*
            ),
            taken AS (
                DELETE FROM task_ready w
                WHERE w.id = ANY (ARRAY(SELECT id FROM next UNION ALL SELECT id FROM orphans))
            ),
            running AS (
                INSERT INTO task_running (id, queue, concurrency_key) SELECT id, queue, concurrency_key FROM changed
            ),
            """ + appendEvents("changed", "'running'", "jsonb_build_object('workerId', worker_id)") + ",\n" + """
            starts AS (
                INSERT INTO queue_claim_start (queue, concurrency_key, started_at, tasks)
                SELECT :queue, concurrency_key, statement_timestamp(), count(*) FROM changed
                WHERE CAST(:rateCount AS integer) IS NOT NULL OR CAST(:ratePerKeyCount AS integer) IS NOT NULL
                GROUP BY concurrency_key
            ),
            expired_starts AS (
                DELETE FROM queue_claim_start
                WHERE queue = :queue
                  AND started_at <= statement_timestamp() - greatest(:ratePeriodMs, :ratePerKeyPeriodMs, 0)
                                                            * interval '1 millisecond'
            ),
            turned AS (
                UPDATE queue SET last_key = (SELECT c.k FROM chosen c JOIN changed USING (id)
                                             ORDER BY c.rank DESC, c.turn DESC LIMIT 1)
                WHERE name = :queue AND :roundRobin AND EXISTS (SELECT 1 FROM changed)
            ),
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            ORDER BY changed.priority DESC, changed.run_at, changed.id
            """;

    /**
     * How long until this queue's rate lets the next claim start, in milliseconds, by the
     * database's clock: when the oldest claim in a full window leaves it. Null when no window is
     * full. Locks nothing.
     */
    static final String RATE_FREES_IN = """
            SELECT ceil(extract(epoch FROM least(
                       (SELECT min(started_at) + :ratePeriodMs * interval '1 millisecond' FROM queue_claim_start
                        WHERE CAST(:rateCount AS integer) IS NOT NULL AND queue = :queue
                          AND started_at > statement_timestamp() - :ratePeriodMs * interval '1 millisecond'
                        HAVING sum(tasks) >= :rateCount),
                       (SELECT min(first) FROM (
                            SELECT min(started_at) + :ratePerKeyPeriodMs * interval '1 millisecond' AS first
                            FROM queue_claim_start
                            WHERE CAST(:ratePerKeyCount AS integer) IS NOT NULL AND queue = :queue
                              AND started_at > statement_timestamp() - :ratePerKeyPeriodMs * interval '1 millisecond'
                            GROUP BY concurrency_key
                            HAVING sum(tasks) >= :ratePerKeyCount) full_keys)
                   ) - statement_timestamp()) * 1000)::bigint AS frees_in_ms
            """;

    /**
     * How many milliseconds until the next waiting task of a queue comes due (null when none waits
     * in the future), by the database's clock: a seek per distinct priority. A claimer that found
     * the queue drained sets its timer by it, so that a delayed task starts at its run_at without
     * a promotion job or a fast poll. Locks nothing.
     */
    static final String NEXT_DUE_ANY_TYPE = """
            WITH RECURSIVE priorities AS (
                (SELECT priority FROM task_ready WHERE queue = :queue AND priority BETWEEN -100 AND 100
                 ORDER BY priority DESC LIMIT 1)
                UNION ALL
                SELECT (SELECT t.priority FROM task_ready t
                        WHERE t.queue = :queue AND t.priority BETWEEN -100 AND 100 AND t.priority < p.priority
                        ORDER BY t.priority DESC LIMIT 1)
                FROM priorities p WHERE p.priority IS NOT NULL
            )
            SELECT ceil(extract(epoch FROM min(first.run_at) - now()) * 1000)::bigint AS due_in_ms
            FROM priorities p CROSS JOIN LATERAL (
                SELECT t.run_at FROM task_ready t
                WHERE t.queue = :queue AND t.priority BETWEEN -100 AND 100 AND t.priority = p.priority
                  AND t.run_at > now()
                ORDER BY t.run_at LIMIT 1
            ) first
            WHERE p.priority IS NOT NULL
            """;

    /** Like {@link #NEXT_DUE_ANY_TYPE} for tasks of the types in :types only, read as {@link #CLAIM_OF_TYPES} reads them. */
    static final String NEXT_DUE_OF_TYPES = """
            WITH RECURSIVE priorities AS (
                (SELECT priority FROM task_ready WHERE queue = :queue AND priority BETWEEN -100 AND 100
                 ORDER BY priority DESC LIMIT 1)
                UNION ALL
                SELECT (SELECT t.priority FROM task_ready t
                        WHERE t.queue = :queue AND t.priority BETWEEN -100 AND 100 AND t.priority < p.priority
                        ORDER BY t.priority DESC LIMIT 1)
                FROM priorities p WHERE p.priority IS NOT NULL
            )
            SELECT ceil(extract(epoch FROM min(first.run_at) - now()) * 1000)::bigint AS due_in_ms
            FROM priorities p CROSS JOIN unnest(:types::text[]) AS wanted(type) CROSS JOIN LATERAL (
                SELECT t.run_at FROM task_ready t
                WHERE t.queue = :queue AND t.type = wanted.type AND t.priority = p.priority AND t.run_at > now()
                ORDER BY t.run_at LIMIT 1
            ) first
            WHERE p.priority IS NOT NULL
            """;

    /**
     * Records the outcomes of many attempts at once: success, or failure that is retried after
     * :delaysMs unless attempts are exhausted or the failure is permanent, or a snooze (:snoozesMs
     * not null): queued again after that long with the attempt not counted, while the task has
     * snoozed fewer than max_snoozes times (counted from the locked row), and otherwise the
     * retryable failure the outcome also describes. An outcome applies only while its worker still
     * holds an unexpired lease on the task: the lease it names, or (with no lease id, as a pull
     * worker may) any lease of that worker, on an attempt whose running row (V023) this statement
     * sees: an attempt that a claim started after the statement began (which it waited for in its
     * lock) is left alone, as a lost lease is, rather than completed by a late outcome with its
     * running row left behind. What it answers, the two statements below add. Locks
     * the rows in id order first: a replica renews its leases while its outcomes are recorded and
     * (on shutdown) its tasks released, over overlapping rows; rows locked in two orders deadlock,
     * PostgreSQL then aborts one statement, and a batch of lost outcomes waits for its leases to
     * run out (seen as a 30-second stall in the benchmark). The rows are locked by a join with the
     * outcomes that then feeds the update, never by a second list joined back to them: the plan
     * cached for a prepared statement assumes ten elements per array, and a nested loop over two
     * such lists compared every outcome with every other (a batch of 500 spent 120 ms there).
     */
    private static final String RECORD_OUTCOMES = """
            WITH outcome AS MATERIALIZED (
                SELECT o.*, o.snooze_ms IS NOT NULL AND locked.snoozes < locked.max_snoozes AS snoozing, locked.queue
                FROM unnest(:ids::bigint[], :leaseIds::uuid[], :workerIds::text[], :succeeded::boolean[],
                            :results::text[], :errors::text[], :retryable::boolean[], :delaysMs::bigint[],
                            :snoozesMs::bigint[])
                     AS o(id, lease_id, worker_id, succeeded, result, error, retryable, delay_ms, snooze_ms)
                JOIN task locked ON locked.id = o.id
                ORDER BY o.id
                FOR UPDATE OF locked
            ),
            """ + batchPerQueue("outcome") + """
            changed AS (
                UPDATE task t
                SET state = CASE WHEN o.succeeded THEN 'succeeded'
                                 WHEN o.snoozing THEN 'queued'
                                 WHEN o.retryable AND t.attempt < t.max_attempts THEN 'queued'
                                 ELSE 'failed' END,
                    attempt = CASE WHEN o.snoozing THEN t.attempt - 1 ELSE t.attempt END,
                    snoozes = CASE WHEN o.snoozing THEN t.snoozes + 1 ELSE t.snoozes END,
                    result = CASE WHEN o.succeeded THEN o.result::jsonb END,
                    last_error = CASE WHEN o.succeeded OR o.snoozing THEN t.last_error ELSE o.error END,
                    run_at = CASE WHEN o.snoozing THEN now() + o.snooze_ms * interval '1 millisecond'
                                  WHEN NOT o.succeeded AND o.retryable AND t.attempt < t.max_attempts
                                  THEN now() + o.delay_ms * interval '1 millisecond' ELSE t.run_at END,
                    finished_at = CASE WHEN o.snoozing THEN NULL
                                       WHEN o.succeeded OR NOT o.retryable OR t.attempt >= t.max_attempts
                                       THEN now() END,
                    worker_id = NULL, lease_id = NULL, lease_expires_at = NULL, timeout_at = NULL,
                    event_previous = t.event_batch, event_batch = b.first_id
                FROM outcome o JOIN batches b ON b.queue = o.queue
                WHERE t.id = o.id AND t.state = 'running' AND t.worker_id = o.worker_id
                  AND (o.lease_id IS NULL OR t.lease_id = o.lease_id) AND t.lease_expires_at > now()
                  AND EXISTS (SELECT 1 FROM task_running r
                              WHERE r.queue = t.queue AND r.concurrency_key = t.concurrency_key AND r.id = t.id)
                RETURNING t.*, o.snoozing AS snoozed
            ),
            """ + appendEvents("changed", "state", """
                       CASE state
                           WHEN 'succeeded' THEN jsonb_build_object('result', result)
                           WHEN 'failed' THEN jsonb_build_object('error', last_error)
                           WHEN 'queued' THEN CASE WHEN snoozed
                               THEN jsonb_build_object('runAt', to_char(run_at AT TIME ZONE 'UTC',
                                                                        'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                                       'error', null, 'snoozed', true)
                               ELSE
                               """ + QUEUED_DETAIL + """
                               END
                       END""") + ",\n" + enterReady("changed") + ",\n" + leaveRunning("changed", "true") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            """;

    /**
     * {@link #RECORD_OUTCOMES}, answering for each changed task only what follows an outcome
     * needs ({@link RecordedOutcome}): the pipelines' statement, for batches of hundreds.
     */
    static final String COMPLETE_MANY = RECORD_OUTCOMES + """
            SELECT changed.id, changed.queue, changed.type, changed.state, changed.run_at, changed.started_at,
                   changed.finished_at, changed.snoozed
            FROM changed LEFT JOIN notified ON true
            """;

    /** {@link #RECORD_OUTCOMES}, answering with each changed task whole: a pull worker's outcome. */
    static final String COMPLETE_RETURNING_TASKS = RECORD_OUTCOMES + """
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Reports progress of a running attempt whose lease :workerId holds (the lease :leaseId, or
     * any of its leases when that is null); returns the task, or nothing when it no longer holds
     * it. Touches no indexed column, so the update stays HOT.
     */
    static final String REPORT_PROGRESS = """
            WITH target AS MATERIALIZED (
                SELECT id FROM task
                WHERE id = :id AND state = 'running' AND worker_id = :workerId
                  AND (CAST(:leaseId AS uuid) IS NULL OR lease_id = :leaseId) AND lease_expires_at > now()
                FOR UPDATE
            ),
            """ + oneBatch("SELECT 1 FROM target") + """
            changed AS (
                UPDATE task t
                SET progress_percent = :percent, progress_message = :message,
                    event_previous = t.event_batch, event_batch = batch.first_id
                FROM target CROSS JOIN batch
                WHERE t.id = target.id AND t.state = 'running' AND t.worker_id = :workerId
                  AND (CAST(:leaseId AS uuid) IS NULL OR t.lease_id = :leaseId) AND t.lease_expires_at > now()
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'progress'",
                "jsonb_build_object('percent', progress_percent, 'message', progress_message)") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Extends the unexpired lease of one running task that :workerId holds (the lease :leaseId,
     * or any of its leases when that is null), never past the attempt's timeout; returns the task.
     */
    static final String HEARTBEAT = """
            UPDATE task
            SET lease_expires_at = least(now() + :leaseMs * interval '1 millisecond', timeout_at)
            WHERE id = :id AND state = 'running' AND worker_id = :workerId
              AND (CAST(:leaseId AS uuid) IS NULL OR lease_id = :leaseId)
              AND lease_expires_at > now() AND (timeout_at IS NULL OR timeout_at > now())
            RETURNING *
            """;

    /**
     * Extends the unexpired leases a worker still holds, never past each attempt's timeout;
     * returns each renewed (id, lease_id) with how many milliseconds the lease now runs, by the
     * database's clock. A lease missing from the answer is no longer the worker's. Locks in id
     * order (see {@link #RECORD_OUTCOMES}).
     */
    static final String RENEW_LEASES = """
            WITH held AS MATERIALIZED (
                SELECT h.*
                FROM unnest(:ids::bigint[], :leaseIds::uuid[]) AS h(id, lease_id)
                JOIN task locked ON locked.id = h.id
                ORDER BY h.id
                FOR UPDATE OF locked
            )
            UPDATE task t
            SET lease_expires_at = least(now() + :leaseMs * interval '1 millisecond', t.timeout_at)
            FROM held h
            WHERE t.id = h.id AND t.lease_id = h.lease_id AND t.state = 'running' AND t.worker_id = :workerId
              AND t.lease_expires_at > now()
            RETURNING t.id, t.lease_id, ceil(extract(epoch FROM t.lease_expires_at - now()) * 1000)::bigint AS lease_ms
            """;

    /**
     * Puts the running tasks of some leases back to queued at once without counting the attempt
     * (a replica shutting down); returns them. Locks in id order (see {@link #RECORD_OUTCOMES}).
     */
    static final String RELEASE_LEASES = """
            WITH held AS MATERIALIZED (
                SELECT h.*, locked.queue
                FROM unnest(:ids::bigint[], :leaseIds::uuid[]) AS h(id, lease_id)
                JOIN task locked ON locked.id = h.id
                ORDER BY h.id
                FOR UPDATE OF locked
            ),
            """ + batchPerQueue("held") + """
            changed AS (
                UPDATE task t
                SET state = 'queued', attempt = t.attempt - 1, worker_id = NULL, lease_id = NULL,
                    lease_expires_at = NULL, timeout_at = NULL, run_at = now(), last_error = :error,
                    event_previous = t.event_batch, event_batch = b.first_id
                FROM held h JOIN batches b ON b.queue = h.queue
                WHERE t.id = h.id AND t.lease_id = h.lease_id AND t.state = 'running'
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'queued'", QUEUED_DETAIL) + ",\n" + enterReady("changed") + ",\n"
                    + leaveRunning("changed", "true") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Puts one running task back to queued without counting the attempt or a snooze, for the
     * worker that holds its unexpired lease :leaseId (a pull worker handing back what it will not
     * finish); returns it, or nothing when that worker no longer holds that lease. Locks the one
     * row, as an outcome does.
     */
    static final String RELEASE_HELD = """
            WITH target AS MATERIALIZED (
                SELECT id FROM task
                WHERE id = :id AND state = 'running' AND worker_id = :workerId AND lease_id = :leaseId
                  AND lease_expires_at > now()
                FOR UPDATE
            ),
            """ + oneBatch("SELECT 1 FROM target") + """
            changed AS (
                UPDATE task t
                SET state = 'queued', attempt = t.attempt - 1, worker_id = NULL, lease_id = NULL,
                    lease_expires_at = NULL, timeout_at = NULL, run_at = now(), last_error = :error,
                    event_previous = t.event_batch, event_batch = batch.first_id
                FROM target CROSS JOIN batch
                WHERE t.id = target.id AND t.state = 'running' AND t.worker_id = :workerId
                  AND t.lease_id = :leaseId AND t.lease_expires_at > now()
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'queued'", QUEUED_DETAIL) + ",\n" + enterReady("changed") + ",\n"
                    + leaveRunning("changed", "true") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Puts back to queued, without counting the attempt, every task that one claim took and still
     * holds: for a claim whose caller stopped waiting, or whose answer was lost. Finds them among
     * the queue's running rows, by the lease id the claimer drew. Returns them.
     * Nobody ran them, so a task this claim started for the first time (its first attempt, never
     * snoozed, never handed back: a hand-back, like any release, leaves its error) is again one
     * that never started, for unique {@code waiting} and debounce.
     */
    static final String RELEASE_CLAIM = """
            WITH claimed AS MATERIALIZED (
                SELECT t.id FROM task t
                WHERE t.id = ANY (ARRAY(SELECT id FROM task_running WHERE queue = :queue))
                  AND t.state = 'running' AND t.lease_id = :leaseId
                ORDER BY t.id
                FOR UPDATE OF t
            ),
            """ + oneBatchAfterLocking("claimed") + """
            changed AS (
                UPDATE task t
                SET state = 'queued', attempt = t.attempt - 1, worker_id = NULL, lease_id = NULL,
                    lease_expires_at = NULL, timeout_at = NULL, run_at = now(), last_error = :error,
                    started_at = CASE WHEN t.attempt = 1 AND t.snoozes = 0 AND t.last_error IS NULL
                                      THEN NULL ELSE t.started_at END,
                    event_previous = t.event_batch, event_batch = batch.first_id
                FROM claimed CROSS JOIN batch
                WHERE t.id = claimed.id AND t.state = 'running' AND t.lease_id = :leaseId
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'queued'", QUEUED_DETAIL) + ",\n" + enterReady("changed") + ",\n"
                    + leaveRunning("changed", "true") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Ends up to :limit attempts whose lease has expired (their worker died, hung or lost the
     * database) or whose timeout has passed (a lease never outlasts it): back to queued, attempt
     * counted, or failed when attempts are exhausted. It reads every running task's row, by id from
     * an array of the running rows' ids, whatever the planner guesses of their number (joined, it
     * may hash a scan of the whole table): their number is bounded by what workers hold. SKIP LOCKED lets any number of replicas run
     * it at once without waiting on, or doing twice, the same rows.
     */
    static final String RESCUE_EXPIRED = """
            WITH expired AS MATERIALIZED (
                SELECT t.id, t.queue FROM task t
                WHERE t.id = ANY (ARRAY(SELECT id FROM task_running))
                  AND t.state = 'running' AND t.lease_expires_at <= now()
                ORDER BY t.lease_expires_at
                LIMIT :limit
                FOR UPDATE OF t SKIP LOCKED
            ),
            """ + batchPerQueue("expired") + """
            changed AS (
                UPDATE task t
                SET state = CASE WHEN t.attempt >= t.max_attempts THEN 'failed' ELSE 'queued' END,
                    finished_at = CASE WHEN t.attempt >= t.max_attempts THEN now() END,
                    run_at = CASE WHEN t.attempt >= t.max_attempts THEN t.run_at ELSE now() END,
                    last_error = CASE WHEN t.timeout_at <= now() THEN 'timed out after ' || t.timeout_seconds || 's'
                                      ELSE 'lease expired' END,
                    worker_id = NULL, lease_id = NULL, lease_expires_at = NULL, timeout_at = NULL,
                    event_previous = t.event_batch, event_batch = b.first_id
                FROM expired JOIN batches b ON b.queue = expired.queue
                WHERE t.id = expired.id
                RETURNING t.*
            ),
            """ + appendEvents("changed", "state",
                "CASE state WHEN 'failed' THEN jsonb_build_object('error', last_error) ELSE " + QUEUED_DETAIL + " END")
            + ",\n" + enterReady("changed") + ",\n" + leaveRunning("changed", "true") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /**
     * Deletes the running rows (V023) of tasks that are not running, which no statement of the
     * service leaves behind (each that ends an attempt either names its lease or sees its running
     * row) but a hand-made change of a task row can: left alone, such a row would hold a slot of
     * the queue's flow control for ever, and a claim that started the task again would fail on it
     * (the claims insert running rows without ON CONFLICT, which took twice as long). Reads every
     * running row. The task rows are locked with their state tested in the locking query, which
     * PostgreSQL tests again on the newest version, so that a task a claim is starting right now
     * keeps the row the claim writes; SKIP LOCKED lets the replicas' sweeps share the work. A stray ready row needs no such sweep: the claim that
     * reaches it finds its task not queued, or gone, and deletes it; a task queued again writes
     * over it; and a delete takes its task's with it.
     */
    static final String FORGET_STRAY_ROWS = """
            WITH not_running AS MATERIALIZED (
                SELECT t.id FROM task t
                WHERE t.id = ANY (ARRAY(SELECT id FROM task_running)) AND t.state <> 'running'
                FOR NO KEY UPDATE OF t SKIP LOCKED
            ),
            gone AS MATERIALIZED (
                SELECT r.id FROM task_running r WHERE NOT EXISTS (SELECT 1 FROM task t WHERE t.id = r.id)
            )
            DELETE FROM task_running r
            WHERE r.id IN (SELECT id FROM not_running UNION ALL SELECT id FROM gone)
            """;

    /**
     * Bulk actions: the next batch of ids that a filter selects, after :after, in id order. The
     * filter conditions go between the prefix and the suffix as {@code AND ...}; :queue is always
     * one of them, so the batch reads the queue's own index. Locks nothing.
     */
    static final String BULK_MATCH_PREFIX = "SELECT id FROM task WHERE queue = :queue AND id > :after";

    static final String BULK_MATCH_SUFFIX = " ORDER BY id LIMIT :batch";

    /**
     * Retries the failed and cancelled tasks among :ids (one, for a single retry): queued again,
     * due now, attempts and snoozes reset (a task failed for snoozing too often would otherwise
     * fail again at its first snooze); the others are left alone. Locks the rows in id order first, as the outcome statements do; the update finds
     * them by id from an array, whatever the planner guesses of their number.
     */
    static final String RETRY_MANY = """
            WITH locked AS MATERIALIZED (
                SELECT id, queue FROM task
                WHERE id = ANY (:ids::bigint[]) AND state IN ('failed', 'cancelled')
                ORDER BY id
                FOR UPDATE
            ),
            """ + batchPerQueue("locked") + """
            changed AS (
                UPDATE task t
                SET state = 'queued', attempt = 0, snoozes = 0, run_at = now(), finished_at = NULL, started_at = NULL,
                    result = NULL, last_error = NULL, progress_percent = NULL, progress_message = NULL,
                    event_previous = t.event_batch, event_batch = b.first_id
                FROM batches b
                WHERE t.id = ANY (ARRAY(SELECT id FROM locked)) AND b.queue = t.queue
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'queued'", QUEUED_DETAIL) + ",\n" + enterReady("changed") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.* FROM changed LEFT JOIN notified ON true
            """;

    /** The first statement of a cancel: locks the queued and running tasks among :ids, in id order; answers their ids. */
    static final String LOCK_FOR_CANCEL = """
            SELECT id FROM task
            WHERE id = ANY (:ids::bigint[]) AND state IN ('queued', 'running')
            ORDER BY id
            FOR UPDATE
            """;

    /**
     * Cancels the queued and running tasks among :ids (one, for a single cancel); returns each
     * with the worker and lease that were running it, so that exactly those attempts can be
     * stopped. Runs after {@link #LOCK_FOR_CANCEL} in the same transaction, for the tasks it locked
     * only (another may have been queued since by a retry, and be running by now): a statement sees the
     * ready and running rows that were committed before it began, and a claim that this waited for
     * in its own lock would have written the task's running row after that (the task row, locked
     * again, is read as it is now; the narrow rows could not be). Then waits for a ready row only
     * where a claim holds it and has skipped the task row this holds, never the other way round.
     */
    static final String CANCEL_MANY = """
            WITH before AS MATERIALIZED (
                SELECT id, queue, state, concurrency_key, worker_id, lease_id FROM task
                WHERE id = ANY (:ids::bigint[]) AND state IN ('queued', 'running')
                ORDER BY id
                FOR UPDATE
            ),
            """ + batchPerQueue("before") + """
            changed AS (
                UPDATE task t
                SET state = 'cancelled', finished_at = now(), worker_id = NULL, lease_id = NULL,
                    lease_expires_at = NULL, timeout_at = NULL,
                    event_previous = t.event_batch, event_batch = b.first_id
                FROM batches b
                WHERE t.id = ANY (ARRAY(SELECT id FROM before)) AND b.queue = t.queue
                RETURNING t.*
            ),
            """ + appendEvents("changed", "'cancelled'", "'{}'::jsonb") + ",\n" + """
            unready AS (
                DELETE FROM task_ready r USING before b WHERE b.state = 'queued' AND r.id = b.id
            ),
            """ + leaveRunning("before", "s.state = 'running'") + ",\n" + """
            notified AS (
                SELECT pg_notify('tasklane_events', '') FROM (SELECT 1 FROM changed LIMIT 1) AS any_row
            )
            SELECT changed.*, before.worker_id AS previous_worker_id, before.lease_id AS previous_lease_id
            FROM changed JOIN before USING (id) LEFT JOIN notified ON true
            """;

    /**
     * Deletes the terminal tasks among :ids (one, for a single delete), each leaving a tombstone
     * with its finish time: its events stay until retention prunes them (see V008), so that no
     * stream misses them. Returns how many it deleted.
     */
    static final String DELETE_MANY = """
            WITH deleted AS (
                DELETE FROM task
                WHERE id = ANY (:ids::bigint[]) AND state IN ('succeeded', 'failed', 'cancelled')
                RETURNING id, finished_at
            ),
            tombstone AS (
                INSERT INTO task_tombstone (task_id, finished_at)
                SELECT id, coalesce(finished_at, now()) FROM deleted
                ON CONFLICT (task_id) DO NOTHING
            ),
            stray AS (
                DELETE FROM task_ready r WHERE r.id = ANY (ARRAY(SELECT id FROM deleted))
            )
            SELECT count(*) AS deleted FROM deleted
            """;
}
