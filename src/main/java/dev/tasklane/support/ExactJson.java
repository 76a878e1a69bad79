package dev.tasklane.support;

import tools.jackson.core.StreamWriteFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.cfg.JsonNodeFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON whose numbers stay as they were sent. PostgreSQL's jsonb keeps a number exactly, as
 * {@code numeric}; Jackson reads one with a fraction or an exponent as a {@code double} unless
 * told otherwise, which rounds {@code 12345678901234567.5} and turns {@code 1e999} into the
 * string {@code "Infinity"}. Every mapper that reads payloads or results is configured here: the
 * application's own (request bodies, payloads read back for handlers) and {@link #MAPPER}.
 * Numbers are written out in full, as PostgreSQL prints them, so that a size limit counts what
 * will be stored and answered, not a short exponent form of it.
 */
public final class ExactJson {

    /** A mapper for code that reads or writes stored JSON outside the application's context. */
    public static final JsonMapper MAPPER = configure(JsonMapper.builder()).build();

    private ExactJson() {
    }

    /** Makes {@code builder} read numbers exactly and write them out in full. */
    public static JsonMapper.Builder configure(JsonMapper.Builder builder) {
        return builder.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
                .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN);
    }

    /**
     * The text to store for {@code value}, numbers written out in full. Check it with
     * {@link StorableText#unstorable(JsonNode)} first: a number beyond its limits cannot be
     * written out.
     */
    public static String text(JsonNode value) {
        return MAPPER.writeValueAsString(value);
    }
}
