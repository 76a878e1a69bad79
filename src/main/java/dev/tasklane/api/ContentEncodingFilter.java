package dev.tasklane.api;

import java.util.List;
import java.util.Locale;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A body sent compressed ({@code Content-Encoding: gzip} and the like) is refused with 415, as
 * RFC 9110 §15.5.16 asks, instead of being parsed as the JSON it is not (a 400 about a control
 * character). The refusal comes when a call reads its body, so a bad token, an unknown route or
 * a call without a body answers as it would without the header.
 */
@Component
final class ContentEncodingFilter implements WebFilter {

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        List<String> codings = exchange.getRequest().getHeaders().getOrEmpty(HttpHeaders.CONTENT_ENCODING);
        if (codings.stream().allMatch(ContentEncodingFilter::isIdentity)) {
            return chain.filter(exchange);
        }
        String named = String.join(", ", codings);
        ServerHttpRequest refusing = new ServerHttpRequestDecorator(exchange.getRequest()) {
            @Override
            public Flux<DataBuffer> getBody() {
                return Flux.error(new CompressedBodyException(named));
            }
        };
        return chain.filter(exchange.mutate().request(refusing).build());
    }

    private static boolean isIdentity(String header) {
        for (String coding : header.split(",")) {
            String name = coding.strip().toLowerCase(Locale.ROOT);
            if (!name.isEmpty() && !name.equals("identity")) {
                return false;
            }
        }
        return true;
    }
}
