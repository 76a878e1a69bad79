package dev.tasklane.api;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import dev.tasklane.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.web.util.UriUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Throws random and mangled requests at the API (bodies, paths, methods, headers) and demands
 * that none of them gets a 5xx, and that every error is a problem with status, title and detail.
 * The seed is printed with any failure, so a finding can be replayed with {@code -Dfuzz.seed=N}.
 */
final class RequestFuzzIntegrationTests extends IntegrationTest {

    @LocalServerPort
    private int port;

    private static final int REQUESTS = 600;
    private static final String[] FIELDS = {"type", "payload", "priority", "runAt", "delaySeconds", "maxAttempts",
            "idempotencyKey", "tasks"};
    /** The fields of a bulk action's filter; never ids, which could reach other tests' tasks. */
    private static final String[] BULK_FIELDS = {"state", "type", "concurrencyKey", "schedule", "createdBefore",
            "limit"};
    private static final String[] BULK_ACTIONS = {"retry", "cancel", "delete"};
    /** Timestamps at and beyond the years 1..9999 every date field takes, and beyond what PostgreSQL stores. */
    private static final String[] TIMESTAMPS = {"2031-01-01T00:00:00Z", "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.9999999Z", "+10000-01-01T00:00:00Z",
            "0000-12-31T23:59:59Z", "-0001-01-01T00:00:00Z", "+294277-01-01T00:00:00Z", "-4714-11-23T00:00:00Z",
            "+999999999-12-31T23:59:59Z", "-999999999-01-01T00:00:00Z", "+999999999-12-31T23:59:59.999999999-18:00",
            "9999-12-31T23:30:00-01:00", "0001-01-01T00:30:00+01:00", "2031-02-30T00:00:00Z", "2031-01-01T24:00:00Z"};
    private static final String[] CONTENT_TYPES = {"application/json", "application/json", "application/json",
            "application/problem+json", "text/plain", "application/x-www-form-urlencoded", "application/json;charset=latin1",
            "multipart/form-data; boundary=x", "application/octet-stream"};

    @Test
    void noGeneratedRequestGetsA5xx() {
        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        Random random = new Random(seed);
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < REQUESTS && failures.size() < 5; i++) {
            Request request = request(random);
            try {
                var result = api().mutate().responseTimeout(java.time.Duration.ofSeconds(10)).build()
                        .method(request.method()).uri(URI.create("http://127.0.0.1:" + port + request.uri()))
                        .header("Content-Type", request.contentType())
                        .header("Accept", request.accept())
                        .bodyValue(request.body().getBytes(StandardCharsets.UTF_8))
                        .exchange()
                        .expectBody().returnResult();
                int status = result.getStatus().value();
                if (status >= 500) {
                    failures.add(status + " for " + request);
                } else if (status >= 400 && request.method() != HttpMethod.HEAD && !isProblem(result.getResponseBody(),
                        result.getResponseHeaders().getContentType(), status)) {
                    failures.add(status + " without a problem body for " + request);
                }
            } catch (RuntimeException e) {
                failures.add("no answer (" + e.getMessage() + ") for " + request);
            }
        }
        assertThat(failures).as("seed %d", seed).isEmpty();
    }

    private static boolean isProblem(byte[] body, org.springframework.http.MediaType type, int status) {
        if (type == null || !type.isCompatibleWith(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON)
                || body == null) {
            return false;
        }
        tools.jackson.databind.JsonNode problem = tools.jackson.databind.json.JsonMapper.builder().build().readTree(body);
        return problem.path("status").asInt() == status && !problem.path("title").asString("").isBlank()
                && !problem.path("detail").asString("").isBlank();
    }

    record Request(HttpMethod method, String uri, String contentType, String accept, String body) {

        Request(HttpMethod method, String uri, String contentType, String body) {
            this(method, uri, contentType, "application/json", body);
        }

        @Override
        public String toString() {
            return method + " " + uri + " [" + contentType + "; accept " + accept + "] "
                    + (body.length() > 300 ? body.substring(0, 300) + "..." : body);
        }
    }

    private static final HttpMethod[] METHODS = {HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH,
            HttpMethod.DELETE, HttpMethod.HEAD, HttpMethod.OPTIONS};
    private static final String[] PATHS = {"/api/v1/tasks", "/api/v1/tasks/1", "/api/v1/tasks/1/cancel",
            "/api/v1/tasks/1/events", "/api/v1/queues", "/api/v1/queues/q/tasks", "/api/v1/queues/q/claims",
            "/api/v1/queues/q/pause", "/api/v1/workers", "/api/v1/events", "/api/v1/nope", "/api/v2/tasks",
            "/api/v1/tasks/%2e%2e/x", "/api/v1/queues/a%2Fb/tasks", "/api/v1/tasks/%E9", "/api/v1//tasks",
            "/api/v1/tasks/1/%00", "/api/v1/tasks/1;x=y"};
    private static final String[] ACCEPTS = {"application/json", "*/*", "text/csv", "application/xml",
            "text/event-stream", "application/problem+json", "image/png;q=0.1", "garbage/"};

    private static Request request(Random random) {
        String queue = random.nextInt(4) == 0 ? encode(randomString(random, 70)) : "fuzz";
        if (random.nextInt(4) == 0) { // paths, methods and headers, with bodies that may not fit them
            String path = random.nextBoolean() ? PATHS[random.nextInt(PATHS.length)]
                    : "/api/v1/" + encode(randomString(random, 20)) + "/" + encode(randomScalar(random));
            String body = random.nextBoolean() ? randomTask(random) : "";
            HttpMethod method = METHODS[random.nextInt(METHODS.length)];
            if (method == HttpMethod.GET && path.endsWith("events")) {
                method = HttpMethod.POST; // a stream that opens never ends: it has tests of its own
            }
            return new Request(method, path, contentType(random), ACCEPTS[random.nextInt(ACCEPTS.length)], body);
        }
        return switch (random.nextInt(7)) {
            case 0, 1 -> new Request(HttpMethod.POST, "/api/v1/queues/" + queue + "/tasks", contentType(random),
                    mangle(random, randomTask(random)));
            case 2 -> new Request(HttpMethod.POST, "/api/v1/queues/" + queue + "/tasks/batch", contentType(random),
                    mangle(random, randomBatch(random)));
            case 3 -> new Request(HttpMethod.GET, "/api/v1/tasks?" + randomQuery(random), "application/json", "");
            case 4 -> new Request(random.nextBoolean() ? HttpMethod.GET : HttpMethod.DELETE,
                    "/api/v1/tasks/" + encode(randomScalar(random)), "application/json", "");
            case 5 -> new Request(HttpMethod.POST, "/api/v1/tasks/" + BULK_ACTIONS[random.nextInt(BULK_ACTIONS.length)],
                    contentType(random), mangle(random, randomBulk(random)));
            default -> new Request(HttpMethod.POST, "/api/v1/queues/" + queue + "/tasks", "application/json",
                    randomValue(random, 3));
        };
    }

    private static String contentType(Random random) {
        return random.nextInt(4) == 0 ? CONTENT_TYPES[random.nextInt(CONTENT_TYPES.length)] : "application/json";
    }

    private static String randomTask(Random random) {
        StringBuilder json = new StringBuilder("{");
        int fields = random.nextInt(FIELDS.length + 1);
        for (int i = 0; i < fields; i++) {
            if (i > 0) {
                json.append(',');
            }
            String field = FIELDS[random.nextInt(FIELDS.length)];
            json.append(quote(field)).append(':').append(plausible(random, field));
        }
        return json.append('}').toString();
    }

    /**
     * A bulk action's filter, always on a queue of its own or none: never one of another test's
     * tasks. Mostly with a createdBefore and few other fields, so that its dates reach the database.
     */
    private static String randomBulk(Random random) {
        StringBuilder json = new StringBuilder("{\"queue\": ")
                .append(random.nextInt(4) > 0 ? "\"fuzz\"" : plausible(random, "queue"));
        if (random.nextInt(4) > 0) {
            json.append(", \"createdBefore\": ").append(plausible(random, "createdBefore"));
        }
        for (int i = random.nextInt(3); i > 0; i--) {
            String field = BULK_FIELDS[random.nextInt(BULK_FIELDS.length)];
            json.append(',').append(quote(field)).append(':').append(plausible(random, field));
        }
        return json.append('}').toString();
    }

    private static String randomBatch(Random random) {
        StringBuilder json = new StringBuilder("{\"tasks\": [");
        int size = random.nextInt(6);
        for (int i = 0; i < size; i++) {
            json.append(i > 0 ? "," : "").append(random.nextInt(5) == 0 ? randomValue(random, 2) : randomTask(random));
        }
        return json.append("]}").toString();
    }

    private static String plausible(Random random, String field) {
        if (random.nextInt(3) == 0) {
            return randomValue(random, 3);
        }
        return switch (field) {
            case "type" -> quote(random.nextBoolean() ? "noop" : randomString(random, 140));
            case "priority", "maxAttempts" -> String.valueOf(random.nextInt(300) - 150);
            case "delaySeconds" -> randomNumber(random);
            case "runAt", "createdBefore" -> quote(random.nextInt(4) == 0 ? randomString(random, 30) : randomTimestamp(random));
            case "queue", "schedule" -> quote(random.nextBoolean() ? "fuzz" : randomString(random, 70));
            case "state" -> quote(random.nextInt(4) > 0 ? "failed" : randomString(random, 10));
            case "limit" -> random.nextInt(4) > 0 ? String.valueOf(1 + random.nextInt(100_000)) : randomNumber(random);
            case "idempotencyKey" -> quote(randomString(random, 220));
            default -> randomValue(random, 4);
        };
    }

    /** One of {@link #TIMESTAMPS}, or a valid one in a year anywhere from -999,999,999 to 999,999,999. */
    private static String randomTimestamp(Random random) {
        if (random.nextBoolean()) {
            return TIMESTAMPS[random.nextInt(TIMESTAMPS.length)];
        }
        long year = random.nextBoolean() ? random.nextInt(20_001) - 5_000 : random.nextLong() % 1_000_000_000L;
        java.time.OffsetDateTime at = java.time.OffsetDateTime.of((int) year, 1 + random.nextInt(12), 1 + random.nextInt(28),
                random.nextInt(24), random.nextInt(60), random.nextInt(60), random.nextInt(1_000_000_000),
                java.time.ZoneOffset.ofTotalSeconds((random.nextInt(37) - 18) * 3600));
        return at.toString();
    }

    private static String randomValue(Random random, int depth) {
        int kind = random.nextInt(depth > 0 ? 7 : 5);
        return switch (kind) {
            case 0 -> "null";
            case 1 -> random.nextBoolean() ? "true" : "false";
            case 2 -> randomNumber(random);
            case 3, 4 -> quote(randomString(random, 40));
            case 5 -> {
                StringBuilder array = new StringBuilder("[");
                for (int i = random.nextInt(4); i > 0; i--) {
                    array.append(randomValue(random, depth - 1)).append(i > 1 ? "," : "");
                }
                yield array.append(']').toString();
            }
            default -> {
                StringBuilder object = new StringBuilder("{");
                for (int i = random.nextInt(4); i > 0; i--) {
                    object.append(quote(randomString(random, 8))).append(':').append(randomValue(random, depth - 1))
                            .append(i > 1 ? "," : "");
                }
                yield object.append('}').toString();
            }
        };
    }

    private static String randomNumber(Random random) {
        String[] specials = {"0", "-0", "1e400", "-1e400", "1.5", "9223372036854775808", "-9223372036854775809",
                "1e-400", "123456789012345678901234567890", "3600", "0.000001", "1E2"};
        return random.nextBoolean() ? specials[random.nextInt(specials.length)]
                : String.valueOf(random.nextLong() / (1L << random.nextInt(63)));
    }

    private static String randomScalar(Random random) {
        String[] specials = {"1", "0", "-1", "abc", "9999999999999999999999", "1.5", "%00", " ", "1e3"};
        return random.nextBoolean() ? specials[random.nextInt(specials.length)] : randomString(random, 12);
    }

    private static String randomQuery(Random random) {
        String[] names = {"queue", "state", "type", "limit", "before", "lastEventId"};
        StringBuilder query = new StringBuilder();
        for (int i = random.nextInt(4); i > 0; i--) {
            query.append(names[random.nextInt(names.length)]).append('=')
                    .append(encode(random.nextBoolean() ? randomScalar(random) : randomString(random, 20))).append('&');
        }
        return query.toString();
    }

    /** Text with the characters that break things: NUL, lone surrogates, quotes, controls, emoji. */
    private static String randomString(Random random, int maxLength) {
        String[] pieces = {"a", "Z", "0", "-", "_", ".", ":", " ", "\"", "\\", "\u0000", "\ud800", "\udc00", "\ud83d\ude00",
                "é", "\n", "\t", "/", "%", "\u202e", "{", "]"};
        int length = random.nextInt(maxLength + 1);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < length; i++) {
            text.append(random.nextInt(3) == 0 ? pieces[random.nextInt(pieces.length)] : (char) ('a' + random.nextInt(26)));
        }
        return text.toString();
    }

    private static String quote(String text) {
        StringBuilder json = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> {
                    if (c < 0x20 || Character.isSurrogate(c)) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"').toString();
    }

    /** Sometimes cuts, doubles or corrupts the text so that it is no longer JSON. */
    private static String mangle(Random random, String json) {
        return switch (random.nextInt(8)) {
            case 0 -> json.substring(0, random.nextInt(json.length() + 1));
            case 1 -> json + json;
            case 2 -> {
                if (json.isEmpty()) {
                    yield json;
                }
                char[] chars = json.toCharArray();
                String breakers = "{}[],:\"\\x\u0000";
                chars[random.nextInt(chars.length)] = breakers.charAt(random.nextInt(breakers.length()));
                yield new String(chars);
            }
            default -> json;
        };
    }

    private static String encode(String text) {
        return UriUtils.encode(text, StandardCharsets.UTF_8);
    }
}
