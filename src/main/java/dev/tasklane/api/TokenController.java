package dev.tasklane.api;

import java.util.List;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/** Tells a token what it may do: the dashboard shows only that. Any valid token may ask. */
@RestController
class TokenController {

    /** The scopes of the token that asks. */
    record TokenJson(@ArraySchema(schema = @Schema(allowableValues = {"read", "enqueue", "work", "admin"}))
                     List<String> scopes) {
    }

    @Operation(operationId = "token", summary = "The scopes of the token that calls",
            responses = @ApiResponse(responseCode = "200", description = "Its scopes"))
    @GetMapping(ScopeRules.TOKEN_ROUTE)
    Mono<TokenJson> token(ServerWebExchange exchange) {
        return exchange.getPrincipal()
                .cast(Authentication.class)
                .map(authentication -> new TokenJson(authentication.getAuthorities().stream()
                        .map(GrantedAuthority::getAuthority)
                        .filter(authority -> authority.startsWith("SCOPE_"))
                        .map(authority -> Scope.fromWireName(authority.substring("SCOPE_".length())))
                        .flatMap(java.util.Optional::stream)
                        .sorted()
                        .map(Scope::wireName)
                        .toList()));
    }
}
