package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * An {@code Accept} header that is no list of media types is a bad request, answered as a
 * problem before anything else reads the header: content negotiation would otherwise fail while
 * writing the response, error responses included, and leave an empty body.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
final class MalformedAcceptFilter implements WebFilter {

    private final JsonMapper json;

    MalformedAcceptFilter(JsonMapper json) {
        this.json = json;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        try {
            exchange.getRequest().getHeaders().getAccept();
            return chain.filter(exchange);
        } catch (InvalidMediaTypeException e) {
            ServerHttpResponse response = exchange.getResponse();
            response.setStatusCode(HttpStatus.BAD_REQUEST);
            response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
            if (exchange.getRequest().getHeaders().getContentLength() > 0) {
                response.getHeaders().set(HttpHeaders.CONNECTION, "close");
            }
            byte[] body = json.writeValueAsString(Map.of("type", "about:blank", "title", "Malformed request",
                    "status", 400, "detail", "The Accept header is not a list of media types: " + e.getMessage()))
                    .getBytes(StandardCharsets.UTF_8);
            return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
        }
    }
}
