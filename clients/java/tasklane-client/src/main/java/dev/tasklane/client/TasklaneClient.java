package dev.tasklane.client;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.codec.json.JacksonJsonDecoder;
import org.springframework.http.codec.json.JacksonJsonEncoder;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.util.UriBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.cfg.JsonNodeFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Typed, non-blocking calls for the whole tasklane API ({@code /api/v1}), one instance per
 * service, safe to share.
 *
 * <p>Reads and enqueues are retried on network errors and on 502, 503 and 504, with backoff; an
 * enqueue keeps one idempotency key across its retries (made up when the task has none), so a
 * retried enqueue never makes two tasks. Calls that change a task (cancel, claim, complete, ...)
 * are not retried: their second attempt would answer differently. Errors the service answers
 * arrive as {@link TasklaneException} with the problem document.
 *
 * <p>Every call gives up with a {@link TimeoutException} when its answer has not arrived within
 * the response timeout (a long-poll claim: within its wait and the response timeout), so a
 * service that stops answering without closing the connection cannot hang a caller; a read or an
 * enqueue that times out is retried like one that met a network error.
 *
 * <p>{@link #events} and {@link #taskEvents} reconnect by themselves with {@code Last-Event-ID},
 * so a subscriber sees every event once across service restarts and replicas.
 */
public final class TasklaneClient {

    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
    };
    private static final MediaType MERGE_PATCH = MediaType.parseMediaType("application/merge-patch+json");

    private final WebClient http;
    private final JsonMapper json;
    private final int retries;
    private final Duration backoff;
    private final Duration reconnectDelay;
    private final Duration streamIdleTimeout;
    private final Duration responseTimeout;

    private TasklaneClient(Builder builder) {
        // Numbers in payloads and results come back as the service keeps them (exactly, as jsonb
        // does), not rounded through a double.
        this.json = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES).build();
        WebClient.Builder web = builder.webClient != null ? builder.webClient.clone() : WebClient.builder();
        web.baseUrl(builder.baseUrl.replaceAll("/+$", "") + "/api/v1")
                .codecs(codecs -> {
                    codecs.defaultCodecs().jacksonJsonDecoder(new JacksonJsonDecoder(json));
                    codecs.defaultCodecs().jacksonJsonEncoder(new JacksonJsonEncoder(json));
                    codecs.defaultCodecs().maxInMemorySize(32 * 1024 * 1024);
                });
        if (builder.token != null) {
            web.defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + builder.token);
        }
        this.http = web.build();
        this.retries = builder.retries;
        this.backoff = builder.backoff;
        this.reconnectDelay = builder.reconnectDelay;
        this.streamIdleTimeout = builder.streamIdleTimeout;
        this.responseTimeout = builder.responseTimeout;
    }

    /** A client of the service at {@code baseUrl} (for example {@code http://tasklane:8080}). */
    public static Builder builder(String baseUrl) {
        return new Builder(baseUrl);
    }

    // ---- tasks

    /** Enqueues one task: 201 or, for a key seen before on this queue, the existing task. */
    public Mono<Task> enqueue(String queue, NewTask task) {
        NewTask keyed = keyed(task);
        return retried(post("/queues/{queue}/tasks", keyed, Task.class, queue));
    }

    /** Enqueues up to 1,000 tasks at once, all or nothing; the answer is in request order. */
    public Mono<List<Task>> enqueueBatch(String queue, List<NewTask> tasks) {
        List<NewTask> keyed = tasks.stream().map(TasklaneClient::keyed).toList();
        return retried(post("/queues/{queue}/tasks/batch", Map.of("tasks", keyed), TaskList.class, queue))
                .map(TaskList::tasks);
    }

    public Mono<Task> get(long id) {
        return retried(call(http.get().uri("/tasks/{id}", id), Task.class));
    }

    /** One page of tasks, newest first. */
    public Mono<TaskPage> list(TaskQuery query) {
        return retried(call(http.get().uri(uri -> taskQuery(uri.path("/tasks"), query)), TaskPage.class));
    }

    /** Every task the query matches, newest first, page after page as the subscriber asks. */
    public Flux<Task> listAll(TaskQuery query) {
        return list(query).expand(page -> page.next() == null ? Mono.empty() : list(query.before(page.next())))
                .concatMapIterable(TaskPage::tasks);
    }

    public Mono<Task> cancel(long id) {
        return post("/tasks/{id}/cancel", Map.of(), Task.class, id);
    }

    public Mono<Task> retry(long id) {
        return post("/tasks/{id}/retry", Map.of(), Task.class, id);
    }

    public Mono<Void> delete(long id) {
        return call(http.delete().uri("/tasks/{id}", id), Void.class);
    }

    /** {@code action} (retry, cancel or delete) on many tasks: {@code {"ids": [...]}} or a filter. */
    public Mono<BulkResult> bulk(String action, Map<String, ?> selection) {
        return post("/tasks/{action}", selection, BulkResult.class, action);
    }

    /** What a bulk action changed and what it skipped. */
    public record BulkResult(long count, long skipped) {
    }

    // ---- queues, workers, schedules

    public Mono<List<QueueInfo>> queues() {
        return retried(call(http.get().uri("/queues"), QueueList.class)).map(QueueList::queues);
    }

    public Mono<QueueInfo> pause(String queue) {
        return post("/queues/{queue}/pause", Map.of(), QueueInfo.class, queue);
    }

    public Mono<QueueInfo> resume(String queue) {
        return post("/queues/{queue}/resume", Map.of(), QueueInfo.class, queue);
    }

    /** Sets a queue's flow control ({@code maxRunning}, {@code rate}, ...; a null value clears one). */
    public Mono<QueueInfo> configureQueue(String queue, Map<String, ?> settings) {
        return call(http.patch().uri("/queues/{queue}", queue).contentType(MERGE_PATCH).bodyValue(settings), QueueInfo.class);
    }

    /** Live workers: replicas and pull workers ({@code {"workers": [...]}}). */
    public Mono<JsonNode> workers() {
        return retried(call(http.get().uri("/workers"), JsonNode.class));
    }

    /** The scopes of this client's token ({@code read}, {@code enqueue}, {@code work}, {@code admin}). */
    public Mono<List<String>> scopes() {
        return retried(call(http.get().uri("/token"), Scopes.class)).map(Scopes::scopes);
    }

    private record Scopes(List<String> scopes) {
    }

    /** Creates or replaces a schedule ({@code cron}, {@code timeZone}, {@code queue}, {@code task}, ...). */
    public Mono<JsonNode> putSchedule(String name, Map<String, ?> schedule) {
        return call(http.put().uri("/schedules/{name}", name).contentType(MediaType.APPLICATION_JSON).bodyValue(schedule),
                JsonNode.class);
    }

    public Mono<JsonNode> schedule(String name) {
        return retried(call(http.get().uri("/schedules/{name}", name), JsonNode.class));
    }

    public Mono<JsonNode> schedules() {
        return retried(call(http.get().uri("/schedules"), JsonNode.class));
    }

    public Mono<Void> deleteSchedule(String name) {
        return call(http.delete().uri("/schedules/{name}", name), Void.class);
    }

    public Mono<JsonNode> pauseSchedule(String name) {
        return post("/schedules/{name}/pause", Map.of(), JsonNode.class, name);
    }

    public Mono<JsonNode> resumeSchedule(String name) {
        return post("/schedules/{name}/resume", Map.of(), JsonNode.class, name);
    }

    /** Makes one task of the schedule now. */
    public Mono<Task> triggerSchedule(String name) {
        return post("/schedules/{name}/trigger", Map.of(), Task.class, name);
    }

    // ---- pull workers

    /** Claims up to {@code max} tasks, waiting up to {@code wait} (at most 30 s) for one. */
    public Mono<List<Task>> claim(String queue, Claim claim) {
        Duration wait = Duration.ofSeconds(claim.waitSeconds() == null ? 0 : Math.max(0, claim.waitSeconds()));
        return post("/queues/{queue}/claims", claim, TaskList.class, responseTimeout.plus(wait), queue).map(TaskList::tasks);
    }

    /** A claim's terms; null fields take the service's defaults. */
    public record Claim(String workerId, Integer max, Integer leaseSeconds, Integer waitSeconds, List<String> types) {

        public static Claim by(String workerId) {
            return new Claim(workerId, null, null, null, null);
        }

        public Claim withMax(int value) {
            return new Claim(workerId, value, leaseSeconds, waitSeconds, types);
        }

        public Claim withLeaseSeconds(int value) {
            return new Claim(workerId, max, value, waitSeconds, types);
        }

        public Claim withWaitSeconds(int value) {
            return new Claim(workerId, max, leaseSeconds, value, types);
        }

        public Claim withTypes(Collection<String> value) {
            return new Claim(workerId, max, leaseSeconds, waitSeconds, List.copyOf(value));
        }
    }

    public Mono<Task> heartbeat(Task claimed, int leaseSeconds) {
        return leased(claimed, "heartbeat", Map.of("leaseSeconds", leaseSeconds));
    }

    public Mono<Task> progress(Task claimed, Integer percent, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("percent", percent);
        body.put("message", message);
        body.values().removeIf(java.util.Objects::isNull);
        return leased(claimed, "progress", body);
    }

    public Mono<Task> complete(Task claimed, Object result) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (result != null) {
            body.put("result", result);
        }
        return leased(claimed, "complete", body);
    }

    /** Fails the attempt: retried with backoff while attempts remain and {@code retry} is true. */
    public Mono<Task> fail(Task claimed, String error, boolean retry) {
        return leased(claimed, "fail", Map.of("error", error, "retry", retry));
    }

    /** Puts the task back to run after {@code delay}, its attempt not counted. */
    public Mono<Task> snooze(Task claimed, Duration delay) {
        return leased(claimed, "snooze", Map.of("delaySeconds", delay.toSeconds()));
    }

    /**
     * Hands the task back: queued again at once, counting neither the attempt nor a snooze, with
     * {@code released: <reason>} as its {@code lastError} (the service's default reason when null).
     */
    public Mono<Task> release(Task claimed, String reason) {
        return leased(claimed, "release", reason == null ? Map.of() : Map.of("reason", reason));
    }

    private Mono<Task> leased(Task claimed, String action, Map<String, ?> fields) {
        Map<String, Object> body = new LinkedHashMap<>(fields);
        body.put("workerId", claimed.workerId());
        if (claimed.leaseId() != null) {
            body.put("leaseId", claimed.leaseId());
        }
        return post("/tasks/{id}/" + action, body, Task.class, claimed.id());
    }

    // ---- event streams

    /**
     * Every event from now on (or after {@code lastEventId} when not null), of one queue when
     * {@code queue} is not null and of the named events when {@code names} is not empty. Never
     * completes: it reconnects with the last id it delivered whenever the connection ends or
     * fails, so nothing is lost or repeated; a {@code gap} event says where retention pruned
     * events it would have resent. Before its first event it has no id to resume from, so pass
     * {@code lastEventId} to be exact from the start.
     */
    public Flux<TaskEvent> events(String queue, Collection<String> names, Long lastEventId) {
        Map<String, Object> params = new LinkedHashMap<>();
        if (queue != null) {
            params.put("queue", queue);
        }
        if (names != null && !names.isEmpty()) {
            params.put("events", String.join(",", names));
        }
        return resumable(uri -> {
            uri.path("/events");
            params.keySet().forEach(name -> uri.queryParam(name, "{" + name + "}"));
            return uri.build(params);
        }, lastEventId);
    }

    /**
     * A task's events, past and live; completes once the task is terminal and all its events are
     * delivered, reconnecting with the last id until then.
     */
    public Flux<TaskEvent> taskEvents(long id) {
        return resumable(uri -> uri.path("/tasks/{id}/events").build(id), null);
    }

    private Flux<TaskEvent> resumable(Function<UriBuilder, java.net.URI> uri, Long lastEventId) {
        return Flux.defer(() -> {
            AtomicReference<Long> cursor = new AtomicReference<>(lastEventId);
            AtomicBoolean finished = new AtomicBoolean();
            return Flux.defer(() -> connect(uri, cursor.get(), finished))
                    .doOnNext(event -> {
                        if (event.id() != null) {
                            cursor.set(event.id());
                        }
                    })
                    .retryWhen(Retry.backoff(Long.MAX_VALUE, reconnectDelay).maxBackoff(Duration.ofSeconds(10))
                            .transientErrors(true).filter(TasklaneClient::transientFailure))
                    .repeatWhen(ends -> ends.takeWhile(end -> !finished.get()).delayElements(reconnectDelay));
        });
    }

    private Flux<TaskEvent> connect(Function<UriBuilder, java.net.URI> uri, Long after, AtomicBoolean finished) {
        return http.get().uri(uri).accept(MediaType.TEXT_EVENT_STREAM)
                .headers(headers -> {
                    if (after != null) {
                        headers.set("Last-Event-ID", after.toString());
                    }
                })
                .exchangeToFlux(response -> {
                    if (response.statusCode().value() == HttpStatus.NO_CONTENT.value()) {
                        finished.set(true); // a task stream after its last event
                        return response.releaseBody().thenMany(Flux.empty());
                    }
                    if (response.statusCode().isError()) {
                        return problem(response).flatMapMany(Flux::error);
                    }
                    return response.bodyToFlux(SSE);
                })
                // The service answers at once and comments on an idle stream every 15 s: a connection
                // silent for longer, headers included, has died without closing (a proxy, a NAT, a
                // frozen replica).
                .timeout(streamIdleTimeout)
                .filter(frame -> frame.event() != null || frame.data() != null)
                .map(this::event);
    }

    private TaskEvent event(ServerSentEvent<String> frame) {
        Long id = frame.id() == null || frame.id().isEmpty() ? null : Long.valueOf(frame.id());
        JsonNode data = frame.data() == null ? json.createObjectNode() : json.readTree(frame.data());
        return new TaskEvent(id, frame.event() == null ? "message" : frame.event(), data);
    }

    // ---- plumbing

    private record TaskList(List<Task> tasks) {
    }

    private record QueueList(List<QueueInfo> queues) {
    }

    // Values go in as URI variables, so that the builder encodes them whole.
    private static java.net.URI taskQuery(UriBuilder uri, TaskQuery query) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("queue", query.queue());
        params.put("state", query.state());
        params.put("type", query.type());
        params.put("concurrencyKey", query.concurrencyKey());
        params.put("schedule", query.schedule());
        params.put("limit", query.limit());
        params.put("before", query.before());
        params.forEach((name, value) -> {
            if (value != null) {
                uri.queryParam(name, "{" + name + "}");
            }
        });
        params.values().removeIf(java.util.Objects::isNull);
        return uri.build(params);
    }

    private static NewTask keyed(NewTask task) {
        return task.idempotencyKey() != null ? task : task.withIdempotencyKey("client-" + UUID.randomUUID());
    }

    private <T> Mono<T> post(String path, Object body, Class<T> type, Object... variables) {
        return post(path, body, type, responseTimeout, variables);
    }

    private <T> Mono<T> post(String path, Object body, Class<T> type, Duration timeout, Object... variables) {
        return call(http.post().uri(path, variables).contentType(MediaType.APPLICATION_JSON).bodyValue(body), type, timeout);
    }

    private <T> Mono<T> call(WebClient.RequestHeadersSpec<?> request, Class<T> type) {
        return call(request, type, responseTimeout);
    }

    private <T> Mono<T> call(WebClient.RequestHeadersSpec<?> request, Class<T> type, Duration timeout) {
        return request.exchangeToMono(response -> response.statusCode().isError()
                        ? problem(response).flatMap(Mono::error)
                        : response.bodyToMono(type))
                .timeout(timeout);
    }

    private Mono<TasklaneException> problem(ClientResponse response) {
        int status = response.statusCode().value();
        return response.bodyToMono(String.class).defaultIfEmpty("")
                .map(body -> new TasklaneException(status, parse(body)));
    }

    private JsonNode parse(String body) {
        try {
            return body.isBlank() ? json.createObjectNode() : json.readTree(body);
        } catch (RuntimeException notJson) {
            return json.createObjectNode().put("detail", body);
        }
    }

    private <T> Mono<T> retried(Mono<T> call) {
        return call.retryWhen(Retry.backoff(retries, backoff).maxBackoff(Duration.ofSeconds(5))
                .filter(TasklaneClient::transientFailure));
    }

    /**
     * Worth another try: the request may not have arrived, or its answer did not (a network
     * error, no answer in time), or a replica was going away.
     */
    static boolean transientFailure(Throwable error) {
        if (error instanceof TasklaneException problem) {
            int status = problem.status();
            return status == 502 || status == 503 || status == 504;
        }
        return error instanceof WebClientRequestException || error instanceof IOException
                || error instanceof TimeoutException || error.getCause() instanceof IOException;
    }

    /** How the client is made. */
    public static final class Builder {

        private final String baseUrl;
        private String token;
        private WebClient.Builder webClient;
        private int retries = 5;
        private Duration backoff = Duration.ofMillis(200);
        private Duration reconnectDelay = Duration.ofMillis(250);
        private Duration streamIdleTimeout = Duration.ofSeconds(45);
        private Duration responseTimeout = Duration.ofSeconds(30);

        private Builder(String baseUrl) {
            this.baseUrl = baseUrl;
        }

        /** The API token, sent as {@code Authorization: Bearer}. */
        public Builder token(String value) {
            this.token = value;
            return this;
        }

        /** A WebClient builder to start from (Boot's, with its observation and codecs). */
        public Builder webClient(WebClient.Builder value) {
            this.webClient = value;
            return this;
        }

        /** Retries of reads and enqueues (5) and the first backoff (200 ms, doubling up to 5 s). */
        public Builder retries(int count, Duration firstBackoff) {
            this.retries = count;
            this.backoff = firstBackoff;
            return this;
        }

        /** The pause before an event stream reconnects (250 ms, growing on repeated failures). */
        public Builder reconnectDelay(Duration value) {
            this.reconnectDelay = value;
            return this;
        }

        /**
         * How long an event stream may stay silent before it is taken for dead and reconnected
         * (45 s: the service sends a comment every 15 s on an idle stream).
         */
        public Builder streamIdleTimeout(Duration value) {
            this.streamIdleTimeout = value;
            return this;
        }

        /**
         * How long a call waits for its answer before it fails with a {@link TimeoutException}
         * (30 s; a long-poll claim waits its {@code waitSeconds} more). Reads and enqueues that
         * time out are retried; other calls are not, since their request may have arrived.
         */
        public Builder responseTimeout(Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("responseTimeout must be positive: " + value);
            }
            this.responseTimeout = value;
            return this;
        }

        public TasklaneClient build() {
            return new TasklaneClient(this);
        }
    }
}
