package dev.tasklane.worker.builtin;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import dev.tasklane.config.TasklaneProperties;
import dev.tasklane.worker.PermanentTaskFailure;
import dev.tasklane.worker.TaskContext;
import dev.tasklane.worker.TaskHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import jakarta.annotation.PreDestroy;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.JsonNode;

/**
 * {@code http}: one HTTP request per attempt. 2xx succeeds with the status and the body (cut at
 * 64 KiB, as text or base64: see {@link ResponseBody}); 408, 429, 5xx, timeouts and network
 * errors are retried; any other status fails the task at once. Redirects are not followed. Internal addresses are refused (see
 * {@link AddressPolicy}): a literal one at enqueue, a name resolving to one before connecting.
 */
@Component
final class HttpTaskHandler implements TaskHandler {

    static final int MAX_BODY_BYTES = 64 * 1024;
    /** In a fixed order: the refusal of another method lists them. */
    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS");
    private static final long DEFAULT_TIMEOUT_MS = 10_000;

    /** What a payload asks for, once validated. */
    private record Call(URI url, HttpMethod method, Map<String, String> headers, @Nullable JsonNode body,
                        Duration timeout) {
    }

    private final AddressPolicy policy;
    private final LoopResources loops = LoopResources.create("tasklane-http", 1, true);
    private final ConnectionProvider connections = ConnectionProvider.builder("tasklane-http")
            .maxConnections(200).pendingAcquireTimeout(Duration.ofSeconds(30)).build();
    private final WebClient client;

    HttpTaskHandler(TasklaneProperties properties) {
        this.policy = new AddressPolicy(properties.http().allowedHosts());
        // Its own NIO event loop: Netty's non-blocking DNS resolver needs a NIO datagram channel,
        // and outbound task traffic then never competes with the API's event loops.
        HttpClient http = HttpClient.create(connections)
                .runOn(loops, false)
                .resolver(new PolicyResolverGroup(new DnsAddressResolverGroup(NioDatagramChannel.class,
                        DnsServerAddressStreamProviders.platformDefault()), policy))
                .followRedirect(false);
        this.client = WebClient.builder().clientConnector(new ReactorClientHttpConnector(http)).build();
    }

    @PreDestroy
    void close() {
        connections.dispose();
        loops.dispose();
    }

    @Override
    public String type() {
        return "http";
    }

    @Override
    public List<String> validate(JsonNode payload) {
        List<String> problems = new ArrayList<>();
        read(payload, problems);
        return problems;
    }

    @Override
    public Mono<?> handle(TaskContext context) {
        List<String> problems = new ArrayList<>();
        Call call = read(context.payload(), problems);
        if (!problems.isEmpty() || call == null) {
            return Mono.error(new PermanentTaskFailure(String.join("; ", problems)));
        }
        WebClient.RequestBodySpec request = client.method(call.method()).uri(call.url())
                .headers(headers -> call.headers().forEach(headers::set));
        WebClient.RequestHeadersSpec<?> withBody = call.body() == null ? request
                : request.contentType(MediaType.APPLICATION_JSON).bodyValue(call.body().toString());
        return withBody.exchangeToMono(this::outcome)
                .timeout(call.timeout(), Mono.error(() -> new TimeoutException(
                        "no response within " + call.timeout().toMillis() + " ms")))
                .onErrorMap(WebClientRequestException.class, e -> refusal(e) != null
                        ? new PermanentTaskFailure(refusal(e).getMessage()) : e);
    }

    private Mono<Map<String, Object>> outcome(ClientResponse response) {
        int status = response.statusCode().value();
        // One byte past the limit tells a body that was cut from one that fits exactly.
        return DataBufferUtils.join(DataBufferUtils.takeUntilByteCount(response.bodyToFlux(DataBuffer.class),
                        MAX_BODY_BYTES + 1L))
                .map(buffer -> {
                    byte[] bytes = new byte[buffer.readableByteCount()];
                    buffer.read(bytes);
                    DataBufferUtils.release(buffer);
                    return ResponseBody.of(bytes, MAX_BODY_BYTES);
                })
                .defaultIfEmpty(ResponseBody.of(new byte[0], MAX_BODY_BYTES))
                .flatMap(body -> {
                    if (status >= 200 && status < 300) {
                        Map<String, Object> result = new LinkedHashMap<>();
                        result.put("status", status);
                        result.put("body", body.text());
                        result.put("bodyEncoding", body.encoding());
                        return Mono.just(result);
                    }
                    String error = "HTTP " + status + (body.isEmpty() ? "" : ": " + body.summary(500));
                    boolean retryable = status == 408 || status == 429 || status >= 500;
                    return Mono.error(retryable ? new IllegalStateException(error) : new PermanentTaskFailure(error));
                });
    }

    private static PolicyResolverGroup.@Nullable RefusedAddressException refusal(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PolicyResolverGroup.RefusedAddressException refused) {
                return refused;
            }
        }
        return null;
    }

    private @Nullable Call read(JsonNode payload, List<String> problems) {
        if (!payload.isObject()) {
            problems.add("payload must be an object with a url");
            return null;
        }
        URI url = url(payload.get("url"), problems);
        HttpMethod method = HttpMethod.POST;
        JsonNode methodNode = payload.get("method");
        if (methodNode != null && !methodNode.isNull()) {
            if (!methodNode.isString() || !METHODS.contains(methodNode.stringValue().toUpperCase(Locale.ROOT))) {
                problems.add("payload.method must be one of " + METHODS);
            } else {
                method = HttpMethod.valueOf(methodNode.stringValue().toUpperCase(Locale.ROOT));
            }
        }
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        JsonNode headersNode = payload.get("headers");
        if (headersNode != null && !headersNode.isNull()) {
            if (!headersNode.isObject()) {
                problems.add("payload.headers must be an object of strings");
            } else {
                headersNode.properties().forEach(header -> {
                    if (framingHeader(header.getKey())) {
                        problems.add("payload.headers." + header.getKey() + " may not be set: the request's framing"
                                + " and connection are the handler's (Host, Content-Length, Transfer-Encoding,"
                                + " Connection, Upgrade, TE, Trailer and Proxy-* are refused)");
                    } else if (!header.getValue().isString() || !validHeader(header.getKey(), header.getValue().stringValue())) {
                        problems.add("payload.headers." + header.getKey() + " must be a valid header with a string value");
                    } else {
                        headers.put(header.getKey(), header.getValue().stringValue());
                    }
                });
            }
        }
        Long timeout = PayloadFields.wholeNumber(payload, "timeoutMs", 1, 600_000, DEFAULT_TIMEOUT_MS, problems);
        JsonNode body = payload.get("body");
        if (url == null || !problems.isEmpty()) {
            return null;
        }
        return new Call(url, method, Map.copyOf(headers), body == null || body.isNull() ? null : body,
                Duration.ofMillis(timeout == null ? DEFAULT_TIMEOUT_MS : timeout));
    }

    /**
     * Headers that decide how the request is framed, where it goes or what happens to the
     * connection: set from a payload they could smuggle a second request or reach another host.
     */
    static boolean framingHeader(String name) {
        String lower = name.toLowerCase(java.util.Locale.ROOT);
        return FRAMING_HEADERS.contains(lower) || lower.startsWith("proxy-");
    }

    private static final Set<String> FRAMING_HEADERS = Set.of("host", "content-length",
            "transfer-encoding", "connection", "upgrade", "te", "trailer");

    private @Nullable URI url(@Nullable JsonNode node, List<String> problems) {
        if (node == null || !node.isString()) {
            problems.add("payload.url must be an http or https URL");
            return null;
        }
        try {
            URI url = new URI(node.stringValue());
            String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
            if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
                problems.add("payload.url must be an absolute http or https URL");
                return null;
            }
            if (url.getPort() == 0 || url.getPort() > 65_535) { // java.net.URI takes any number
                problems.add("payload.url has port " + url.getPort() + "; a port is 1 to 65535");
                return null;
            }
            InetAddress literal = IpLiterals.parse(url.getHost());
            if (literal != null && !policy.allowsHost(url.getHost()) && !policy.allows(literal)) {
                problems.add("payload.url points at " + literal.getHostAddress() + ", a loopback, private, link-local"
                        + " or metadata address; TASKLANE_HTTP_ALLOWED_HOSTS can allow it");
                return null;
            }
            return url;
        } catch (URISyntaxException e) {
            problems.add("payload.url is not a valid URL: " + e.getReason());
            return null;
        }
    }

    /**
     * RFC 9110's field name (a token) and value (visible ASCII, space, tab, and the bytes above
     * 0x7F as Latin-1), as Netty checks them when it builds the request: a header it would refuse
     * is refused at enqueue, not retried at every attempt, and none is sent altered (a character
     * beyond Latin-1 would go out as '?').
     */
    private static boolean validHeader(String name, String value) {
        return !name.isEmpty() && name.chars().allMatch(HttpTaskHandler::isTokenChar)
                && value.chars().allMatch(c -> c == '\t' || (c >= 0x20 && c != 0x7F && c <= 0xFF));
    }

    private static boolean isTokenChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }

}
