package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.authorization.AuthorizationDecision;
import org.springframework.security.authorization.AuthorizationResult;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.core.DefaultOAuth2AuthenticatedPrincipal;
import org.springframework.security.oauth2.server.resource.introspection.BadOpaqueTokenException;
import org.springframework.security.oauth2.server.resource.introspection.ReactiveOpaqueTokenIntrospector;
import org.springframework.security.oauth2.server.resource.web.server.authentication.ServerBearerTokenAuthenticationConverter;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.security.web.server.authorization.AuthorizationContext;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedException;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler;
import org.springframework.security.web.server.firewall.ServerWebExchangeFirewall;
import org.springframework.security.web.server.firewall.StrictServerWebExchangeFirewall;
import org.springframework.security.web.server.util.matcher.PathPatternParserServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Bearer tokens on the API (Spring Security's resource server, with {@link ApiTokens} as the
 * opaque-token introspector), each call allowed only with the scope {@link ScopeRules} names. Open: the dashboard, health probes, Prometheus and the API docs.
 * The two event streams also take the token as {@code access_token}, because a browser's
 * EventSource cannot send headers; no other route does.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfig {

    private static final ServerWebExchangeMatcher API = new PathPatternParserServerWebExchangeMatcher("/api/**");

    private static final ServerWebExchangeMatcher EVENT_STREAMS = anyOf(
            new PathPatternParserServerWebExchangeMatcher("/api/v1/events", HttpMethod.GET),
            new PathPatternParserServerWebExchangeMatcher("/api/v1/tasks/{id}/events", HttpMethod.GET));

    /**
     * Spring Security's observations: a span and a timer for the filter chain, the authentication
     * and the authorization of every request, on top of {@code http.server.requests}, which
     * already times each call with its status (401 and 403 included). They cost about a tenth of
     * a single enqueue's CPU, so they are off.
     */
    @Bean
    SecurityObservationSettings securityObservationSettings() {
        return SecurityObservationSettings.noObservations();
    }

    @Bean
    SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http, ApiTokens tokens, JsonMapper json) {
        ServerAuthenticationEntryPoint unauthorized = (exchange, e) -> {
            boolean tokenSent = exchange.getRequest().getHeaders().containsHeader(HttpHeaders.AUTHORIZATION)
                    || exchange.getRequest().getQueryParams().containsKey("access_token");
            exchange.getResponse().getHeaders().set(HttpHeaders.WWW_AUTHENTICATE,
                    tokenSent ? "Bearer error=\"invalid_token\"" : "Bearer");
            closeIfBodyUnread(exchange);
            return writeProblem(exchange.getResponse(), json, HttpStatus.UNAUTHORIZED, "Unauthorized",
                    tokenSent ? "The bearer token is not valid" : "This call needs Authorization: Bearer <token>");
        };
        ServerAccessDeniedHandler forbidden = (exchange, e) -> {
            closeIfBodyUnread(exchange);
            if (exchange.getRequest().getPath().pathWithinApplication().value().startsWith("/api/")) {
                Scope needed = ScopeRules.required(exchange.getRequest());
                return writeProblem(exchange.getResponse(), json, HttpStatus.FORBIDDEN, "Forbidden",
                        "This call needs a token with the scope '" + (needed == null ? "" : needed.wireName())
                                + "', which this token does not have");
            }
            return writeProblem(exchange.getResponse(), json, HttpStatus.FORBIDDEN, "Forbidden", "This endpoint is closed");
        };
        return http
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .authorizeExchange(exchanges -> exchanges
                        // first and without pathMatchers' Or (see anyOf): the API is the hot path
                        .matchers(API).access(SecurityConfig::scoped)
                        .pathMatchers("/actuator/health", "/actuator/health/**", "/actuator/prometheus").permitAll()
                        .pathMatchers("/actuator", "/actuator/**").denyAll()
                        .anyExchange().permitAll())
                .oauth2ResourceServer(resourceServer -> resourceServer
                        .bearerTokenConverter(bearerTokens())
                        .authenticationEntryPoint(unauthorized)
                        .accessDeniedHandler(forbidden)
                        .opaqueToken(opaque -> opaque.introspector(introspector(tokens))))
                .exceptionHandling(exceptions -> exceptions
                        .authenticationEntryPoint(unauthorized)
                        .accessDeniedHandler(forbidden))
                .build();
    }

    /**
     * Spring Security's strict firewall, and a path that is not UTF-8 (raw bytes beyond ASCII, or
     * percent-escapes that decode to no UTF-8): rejected like the firewall's own findings rather
     * than decoded into replacement characters.
     */
    @Bean
    ServerWebExchangeFirewall utf8PathFirewall() {
        StrictServerWebExchangeFirewall strict = new StrictServerWebExchangeFirewall();
        return exchange -> Utf8Paths.isUtf8(exchange.getRequest().getURI().getRawPath())
                ? strict.getFirewalledExchange(exchange)
                : Mono.error(new ServerExchangeRejectedException("the path is not valid UTF-8"));
    }

    /**
     * Requests the firewall rejects before anything else sees them (an encoded slash or dot
     * segment in the path, a path that is not UTF-8, a malformed header): a problem like every
     * other error, not an empty 400.
     */
    @Bean
    ServerExchangeRejectedHandler problemForRejectedExchanges(JsonMapper json) {
        return (exchange, rejected) -> {
            closeIfBodyUnread(exchange);
            return writeProblem(exchange.getResponse(), json, HttpStatus.BAD_REQUEST, "Bad request",
                    "The request was rejected: " + rejected.getMessage());
        };
    }

    /**
     * A refused request's body is never read, so the connection cannot carry another request:
     * say so, rather than let a client send its next request into a closing connection.
     */
    private static void closeIfBodyUnread(ServerWebExchange exchange) {
        HttpHeaders headers = exchange.getRequest().getHeaders();
        if (headers.getContentLength() > 0 || headers.containsHeader(HttpHeaders.TRANSFER_ENCODING)) {
            exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
        }
    }

    /**
     * Either matcher, like {@link ServerWebExchangeMatchers#matchers}, without its debug message
     * for each try, which the logging bridge formats even when debug is off.
     */
    private static ServerWebExchangeMatcher anyOf(ServerWebExchangeMatcher first, ServerWebExchangeMatcher second) {
        return exchange -> first.matches(exchange).flatMap(match ->
                match.isMatch() ? Mono.just(match) : second.matches(exchange));
    }

    private static ServerAuthenticationConverter bearerTokens() {
        ServerBearerTokenAuthenticationConverter headerOnly = new ServerBearerTokenAuthenticationConverter();
        ServerBearerTokenAuthenticationConverter headerOrQuery = new ServerBearerTokenAuthenticationConverter();
        headerOrQuery.setAllowUriQueryParameter(true);
        return exchange -> EVENT_STREAMS.matches(exchange).flatMap(match ->
                (match.isMatch() ? headerOrQuery : headerOnly).convert(exchange));
    }

    /** Granted when the token has the scope the call needs (see {@link ScopeRules}). */
    private static Mono<AuthorizationResult> scoped(Mono<Authentication> authentication, AuthorizationContext context) {
        Scope needed = ScopeRules.required(context.getExchange().getRequest());
        return authentication
                .filter(Authentication::isAuthenticated)
                .map(granted -> (AuthorizationResult) new AuthorizationDecision(needed == null
                        || granted.getAuthorities().stream().anyMatch(a -> needed.authority().equals(a.getAuthority()))))
                .defaultIfEmpty(new AuthorizationDecision(false));
    }

    private static ReactiveOpaqueTokenIntrospector introspector(ApiTokens tokens) {
        return token -> tokens.scopesOf(token)
                .<Mono<OAuth2AuthenticatedPrincipal>>map(scopes -> Mono.just(new DefaultOAuth2AuthenticatedPrincipal(
                        "api-client", Map.of("sub", "api-client"),
                        scopes.stream().sorted().map(scope -> (GrantedAuthority) new SimpleGrantedAuthority(scope.authority()))
                                .toList())))
                .orElseGet(() -> Mono.error(new BadOpaqueTokenException("unknown token")));
    }

    private static Mono<Void> writeProblem(ServerHttpResponse response, JsonMapper json, HttpStatus status,
                                           String title, String detail) {
        response.setStatusCode(status);
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = json.writeValueAsString(Map.of("type", "about:blank", "title", title,
                "status", status.value(), "detail", detail)).getBytes(StandardCharsets.UTF_8);
        DataBuffer buffer = response.bufferFactory().wrap(body);
        return response.writeWith(Mono.just(buffer));
    }
}
