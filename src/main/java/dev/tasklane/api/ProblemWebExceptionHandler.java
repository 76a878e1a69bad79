package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The last word on errors that no controller advice turned into a response: those raised where
 * content negotiation itself fails (an {@code Accept} header that is no media type), and anything
 * else that would reach Boot's default error handler, whose JSON is not a problem. It writes the
 * problem directly, whatever the request accepts. Ordered before Boot's handler.
 */
@Component
@Order(-2)
final class ProblemWebExceptionHandler implements WebExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ProblemWebExceptionHandler.class);

    private final JsonMapper json;

    ProblemWebExceptionHandler(JsonMapper json) {
        this.json = json;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(failure);
        }
        HttpStatusCode status = failure instanceof ErrorResponse error ? error.getStatusCode()
                : HttpStatus.INTERNAL_SERVER_ERROR;
        if (status.is5xxServerError()) {
            log.error("Request {} {} failed", exchange.getRequest().getMethod(), exchange.getRequest().getPath(), failure);
        }
        HttpStatus known = HttpStatus.resolve(status.value());
        String title = known != null ? known.getReasonPhrase() : "Error";
        String detail = failure instanceof ErrorResponse error && error.getBody().getDetail() != null
                ? error.getBody().getDetail() : status.is5xxServerError() ? "The request failed" : title;
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", title);
        problem.put("status", status.value());
        problem.put("detail", detail);
        problem.put("instance", exchange.getRequest().getPath().value());
        response.setStatusCode(status);
        HttpHeaders headers = response.getHeaders();
        if (failure instanceof ErrorResponse error) {
            headers.addAll(error.getHeaders());
        }
        headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = json.writeValueAsString(problem).getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
