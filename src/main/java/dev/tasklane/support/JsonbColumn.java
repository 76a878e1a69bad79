package dev.tasklane.support;

import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code jsonb} column as JSON text. Read as a String, a binary result (which the service
 * asks for) would keep jsonb's leading version byte; the driver's {@link Json} strips it.
 */
public final class JsonbColumn {

    private JsonbColumn() {
    }

    /** The column's JSON text, or null for SQL NULL. */
    public static @Nullable String text(Readable row, String column) {
        Json json = row.get(column, Json.class);
        return json == null ? null : json.asString();
    }

    /** The JSON text of the column at {@code index}, or null for SQL NULL. */
    public static @Nullable String text(Readable row, int index) {
        Json json = row.get(index, Json.class);
        return json == null ? null : json.asString();
    }
}
