package dev.tasklane.api;

import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.IntegrationTest;
import dev.tasklane.testsupport.TaskFixtures;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route is refused (403, naming the scope) to a token without its scope and allowed to one
 * with it. "Allowed" means the call got past authorization: whatever the route then answers
 * (200, 404 for an id that does not exist, 422 for a body it does not like), it is not 401 or 403.
 */
final class ScopeIntegrationTests extends IntegrationTest {

    private static final Map<String, String> TOKENS = Map.of("read", "read-token", "enqueue", "enqueue-token",
            "work", "work-token", "admin", "admin-token");

    /** One route, with the scope it needs. */
    private record Route(HttpMethod method, String path, String scope) {
    }

    private static final String Q = TaskFixtures.uniqueQueue("scoped");

    private static final List<Route> ROUTES = List.of(
            new Route(HttpMethod.GET, "/api/v1/tasks/1", "read"),
            new Route(HttpMethod.GET, "/api/v1/tasks?queue=" + Q, "read"),
            new Route(HttpMethod.GET, "/api/v1/queues", "read"),
            new Route(HttpMethod.GET, "/api/v1/workers", "read"),
            new Route(HttpMethod.GET, "/api/v1/schedules", "read"),
            new Route(HttpMethod.GET, "/api/v1/schedules/none", "read"),
            new Route(HttpMethod.GET, "/api/v1/tasks/999999999/events", "read"),
            new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/tasks", "enqueue"),
            new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/tasks/batch", "enqueue"),
            new Route(HttpMethod.POST, "/api/v1/schedules/none/trigger", "enqueue"),
            new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/claims", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/heartbeat", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/progress", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/complete", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/fail", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/snooze", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/release", "work"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/cancel", "admin"),
            new Route(HttpMethod.POST, "/api/v1/tasks/999999999/retry", "admin"),
            new Route(HttpMethod.DELETE, "/api/v1/tasks/999999999", "admin"),
            new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/pause", "admin"),
            new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/resume", "admin"),
            new Route(HttpMethod.PATCH, "/api/v1/queues/" + Q, "admin"),
            new Route(HttpMethod.POST, "/api/v1/tasks/retry", "admin"),
            new Route(HttpMethod.POST, "/api/v1/tasks/cancel", "admin"),
            new Route(HttpMethod.POST, "/api/v1/tasks/delete", "admin"),
            new Route(HttpMethod.PUT, "/api/v1/schedules/none", "admin"),
            new Route(HttpMethod.DELETE, "/api/v1/schedules/none", "admin"),
            new Route(HttpMethod.POST, "/api/v1/schedules/none/pause", "admin"),
            new Route(HttpMethod.POST, "/api/v1/schedules/none/resume", "admin"));

    @Test
    void eachRouteIsRefusedWithoutItsScopeNamingItAndAllowedWithIt() {
        for (Route route : ROUTES) {
            TOKENS.forEach((scope, token) -> {
                EntityExchangeResult<byte[]> result = call(route, token);
                int status = result.getStatus().value();
                if (scope.equals(route.scope())) {
                    assertThat(status).as(route + " with " + scope).isNotIn(401, 403);
                } else {
                    assertThat(status).as(route + " with " + scope).isEqualTo(403);
                    JsonNode problem = JsonMapper.builder().build().readTree(result.getResponseBody());
                    assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
                    assertThat(problem.get("detail").stringValue()).contains("'" + route.scope() + "'");
                }
            });
            assertThat(call(route, TOKEN).getStatus().value()).as(route + " with every scope").isNotIn(401, 403);
            assertThat(call(route, "not-a-token").getStatus().value()).as(route + " with no valid token").isEqualTo(401);
        }
    }

    @Test
    void aTokenGivenAsItsSha256WorksWithItsScopes() {
        assertThat(call(new Route(HttpMethod.GET, "/api/v1/queues", "read"), "hashed-token").getStatus().value())
                .isEqualTo(200);
        assertThat(call(new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/tasks", "enqueue"), "hashed-token")
                .getStatus().value()).isEqualTo(201);
        assertThat(call(new Route(HttpMethod.POST, "/api/v1/queues/" + Q + "/pause", "admin"), "hashed-token")
                .getStatus().value()).isEqualTo(403);
        // the digest itself is not a token
        assertThat(call(new Route(HttpMethod.GET, "/api/v1/queues", "read"),
                "550643f45e135491c47bea94823b37278d5dd91375b285d44001d005d1603a33").getStatus().value()).isEqualTo(401);
    }

    @Test
    void aTokenLearnsItsOwnScopesWhateverThemAre() {
        assertThat(scopesOf("work-token")).isEqualTo("[\"work\"]");
        assertThat(scopesOf("hashed-token")).isEqualTo("[\"read\",\"enqueue\"]");
        assertThat(scopesOf(TOKEN)).isEqualTo("[\"read\",\"enqueue\",\"work\",\"admin\"]");
        anonymous().get().uri("/api/v1/token").exchange().expectStatus().isUnauthorized();
    }

    @Test
    void theEventStreamsTakeTheReadScopeAsAccessTokenToo() {
        anonymous().get().uri("/api/v1/tasks/999999999/events?access_token=work-token").exchange()
                .expectStatus().isForbidden();
        anonymous().get().uri("/api/v1/tasks/999999999/events?access_token=read-token").exchange()
                .expectStatus().isNotFound();
    }

    private String scopesOf(String token) {
        return anonymous().get().uri("/api/v1/token").header(HttpHeaders.AUTHORIZATION, "Bearer " + token).exchange()
                .expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody().get("scopes").toString();
    }

    private EntityExchangeResult<byte[]> call(Route route, String token) {
        var request = anonymous().method(route.method()).uri(route.path())
                .header(HttpHeaders.AUTHORIZATION, "Bearer " + token);
        var exchange = route.method() == HttpMethod.GET || route.method() == HttpMethod.DELETE
                ? request.exchange()
                : request.contentType(MediaType.APPLICATION_JSON).bodyValue(body(route)).exchange();
        return exchange.expectBody().returnResult();
    }

    private static String body(Route route) {
        if (route.path().endsWith("/tasks")) {
            return "{\"type\": \"noop\"}";
        }
        if (route.path().endsWith("/batch")) {
            return "{\"tasks\": [{\"type\": \"noop\"}]}";
        }
        return "{}";
    }
}
