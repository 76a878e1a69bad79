package dev.tasklane.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.Sql;

/**
 * PostgreSQL's time per statement from {@code pg_stat_statements}, where the server preloads it
 * ({@code .ci/bench-cluster} starts one that does): execution time of each of the service's
 * statements, so that a phase's cost can be split between them. Execution time, not CPU time;
 * on a server whose cores are busy the two differ by what the statement waited for.
 */
final class StatementTimes {

    /** Each statement the harness names, by how its text begins (whitespace collapsed). */
    private static final Map<String, String> NAMES = namesInOrder();

    private final boolean available;

    private StatementTimes(boolean available) {
        this.available = available;
    }

    /** Reads the view if the server preloads the extension; otherwise reports nothing. */
    static StatementTimes ifAvailable() {
        try {
            Sql.update("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            Sql.column("SELECT count(*) FROM pg_stat_statements");
            return new StatementTimes(true);
        } catch (RuntimeException notPreloaded) {
            return new StatementTimes(false);
        }
    }

    boolean available() {
        return available;
    }

    void reset() {
        if (available) {
            Sql.column("SELECT pg_stat_statements_reset()::text");
        }
    }

    /** Execution by statement name since the last reset, this database only; longest first. */
    Map<String, Execution> byStatement() {
        Map<String, Execution> executions = new LinkedHashMap<>();
        if (!available) {
            return executions;
        }
        List<String> rows = Sql.column("SELECT regexp_replace(query, '\\s+', ' ', 'g') || chr(1) || total_exec_time"
                + " || chr(1) || calls FROM pg_stat_statements"
                + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                + " ORDER BY total_exec_time DESC");
        for (String row : rows) {
            String[] parts = row.split("\u0001");
            executions.merge(name(parts[0].trim()),
                    new Execution(Double.parseDouble(parts[1]), Long.parseLong(parts[2])), Execution::plus);
        }
        return executions;
    }

    /** How long a statement executed in all, and in how many executions. */
    record Execution(double millis, long calls) {
        Execution plus(Execution other) {
            return new Execution(millis + other.millis, calls + other.calls);
        }
    }

    /** The statement a query text is, whatever its parameters were numbered or inlined as. */
    private static String name(String query) {
        if (query.startsWith("WITH RECURSIVE priorities")) {
            return query.contains("UPDATE task") ? "claim" : "next due time";
        }
        for (Map.Entry<String, String> known : NAMES.entrySet()) {
            if (query.startsWith(known.getKey())) {
                return known.getValue();
            }
        }
        return query.substring(0, Math.min(48, query.length())) + " …";
    }

    private static Map<String, String> namesInOrder() {
        Map<String, String> names = new LinkedHashMap<>();
        names.put("WITH input AS MATERIALIZED", "enqueue");
        names.put("WITH outcome AS MATERIALIZED", "complete");
        names.put("WITH held AS MATERIALIZED", "renew or release leases");
        names.put("WITH seq AS MATERIALIZED", "event reader's horizon");
        names.put("SELECT pg_notify", "notify");
        return names;
    }
}
