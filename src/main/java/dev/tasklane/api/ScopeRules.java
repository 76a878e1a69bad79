package dev.tasklane.api;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** Which scope each call of the API needs: the one place that decides it. */
final class ScopeRules {

    /** The route that tells a token its own scopes: any valid token may ask. */
    static final String TOKEN_ROUTE = "/api/v1/token";

    private static final List<PathPattern> ENQUEUE = patterns("/api/v1/queues/{queue}/tasks",
            "/api/v1/queues/{queue}/tasks/batch", "/api/v1/schedules/{name}/trigger");
    private static final List<PathPattern> WORK = patterns("/api/v1/queues/{queue}/claims",
            "/api/v1/tasks/{id}/heartbeat", "/api/v1/tasks/{id}/progress", "/api/v1/tasks/{id}/complete",
            "/api/v1/tasks/{id}/fail", "/api/v1/tasks/{id}/snooze", "/api/v1/tasks/{id}/release");

    private ScopeRules() {
    }

    /** The scope the request needs; null for the token route, which needs none beyond a valid token. */
    static @Nullable Scope required(ServerHttpRequest request) {
        PathContainer path = request.getPath().pathWithinApplication();
        if (path.value().equals(TOKEN_ROUTE)) {
            return null;
        }
        HttpMethod method = request.getMethod();
        if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
            return Scope.READ;
        }
        if (HttpMethod.POST.equals(method)) {
            if (ENQUEUE.stream().anyMatch(pattern -> pattern.matches(path))) {
                return Scope.ENQUEUE;
            }
            if (WORK.stream().anyMatch(pattern -> pattern.matches(path))) {
                return Scope.WORK;
            }
        }
        return Scope.ADMIN;
    }

    private static List<PathPattern> patterns(String... paths) {
        PathPatternParser parser = new PathPatternParser();
        return java.util.Arrays.stream(paths).map(parser::parse).toList();
    }
}
