package dev.tasklane.queue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of {@link TaskSql}'s statements with JDBC placeholders in place of its named parameters,
 * so that tests and the benchmark can run it (or EXPLAIN it) from a plain JDBC connection.
 *
 * @param sql the statement with {@code ?} placeholders
 * @param names the parameter of each placeholder, in order
 */
public record JdbcStatement(String sql, List<String> names) {

    // A named parameter; not the ':' of a cast ('::') nor of a time format ('HH24:MI').
    private static final Pattern NAMED = Pattern.compile("(?<![:A-Za-z0-9]):([a-z][A-Za-z]*)\\b");

    public static JdbcStatement of(String namedSql) {
        List<String> names = new ArrayList<>();
        Matcher matcher = NAMED.matcher(namedSql);
        StringBuilder sql = new StringBuilder();
        while (matcher.find()) {
            names.add(matcher.group(1));
            matcher.appendReplacement(sql, "?");
        }
        matcher.appendTail(sql);
        return new JdbcStatement(sql.toString(), List.copyOf(names));
    }

    /**
     * The statement with PostgreSQL's numbered placeholders ({@code $1}, {@code $2}, ...), one per
     * distinct name, for {@code PREPARE}; {@code names} then gives the parameter of each number.
     */
    public static JdbcStatement numbered(String namedSql) {
        List<String> names = new ArrayList<>();
        Matcher matcher = NAMED.matcher(namedSql);
        StringBuilder sql = new StringBuilder();
        while (matcher.find()) {
            if (!names.contains(matcher.group(1))) {
                names.add(matcher.group(1));
            }
            matcher.appendReplacement(sql, "\\$" + (names.indexOf(matcher.group(1)) + 1));
        }
        matcher.appendTail(sql);
        return new JdbcStatement(sql.toString(), List.copyOf(names));
    }

    /**
     * A claim's values for a queue without flow control: {@code values} and the flow-control
     * parameters of {@link TaskSql#CLAIM_ANY_TYPE} and {@link TaskSql#CLAIM_OF_TYPES}, all off.
     */
    public static Map<String, Object> claimWithoutFlowControl(Map<String, ?> values) {
        Map<String, Object> all = new HashMap<>(values);
        all.put("rateCount", null);
        all.put("ratePeriodMs", null);
        all.put("underLock", false);
        return all;
    }

    /** Prepares the statement on {@code connection} with the values of its parameters. */
    public PreparedStatement prepare(Connection connection, Map<String, ?> values) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        for (int i = 0; i < names.size(); i++) {
            if (!values.containsKey(names.get(i))) {
                throw new IllegalArgumentException("no value for :" + names.get(i));
            }
            Object value = values.get(names.get(i));
            if (value instanceof String[] array) {
                statement.setArray(i + 1, connection.createArrayOf("text", array));
            } else if (value instanceof UUID uuid) {
                statement.setObject(i + 1, uuid);
            } else {
                statement.setObject(i + 1, value);
            }
        }
        return statement;
    }
}
