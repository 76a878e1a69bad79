package dev.tasklane.api;

import java.util.List;
import java.util.Map;
import java.util.Set;

import io.swagger.v3.core.converter.ModelConverters;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import io.swagger.v3.oas.models.servers.Server;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI document at {@code /v3/api-docs} (and Swagger UI at {@code /swagger-ui.html}):
 * springdoc reads the routes and their own responses from the controllers; the answers every
 * route shares by the contract's rules (401, and 400/413/415/422 for bodies, 404 for ids, 409
 * for state changes) are added here, in one place, as problem details.
 */
@Configuration(proxyBeanMethods = false)
class OpenApiConfig {

    private static final String BEARER = "bearer";
    private static final String PROBLEM = "application/problem+json";
    private static final Set<String> CONFLICTS = Set.of("cancelTask", "retryTask", "deleteTask", "heartbeat", "reportProgress",
            "complete", "fail", "snooze", "release");

    /** The event names a stream's frames carry, for the description of its 200 answer. */
    private static final String EVENT_NAMES = "queued, running, progress, succeeded, failed, cancelled";

    @Bean
    OpenAPI tasklaneOpenApi(ObjectProvider<BuildProperties> build) {
        BuildProperties properties = build.getIfAvailable();
        return new OpenAPI()
                .servers(List.of(new Server().url("/").description("This service")))
                .info(new Info().title("tasklane")
                        .version(properties == null ? "development" : properties.getVersion())
                        .license(new License().name("Apache-2.0").url("https://www.apache.org/licenses/LICENSE-2.0"))
                        .description("""
                        A task queue on PostgreSQL: enqueue over REST, work in-process or by pull, \
                        watch progress as Server-Sent Events. Every /api/v1 call needs \
                        `Authorization: Bearer <token>`; errors are RFC 9457 problem details."""))
                .components(new Components().addSecuritySchemes(BEARER, new SecurityScheme()
                        .type(SecurityScheme.Type.HTTP).scheme("bearer")
                        .description("One of TASKLANE_API_TOKENS. Each call needs a scope of the token: read (GETs,"
                                + " streams), enqueue, work (the pull API) or admin (the rest); 403 names the one missing")));
    }

    @Bean
    OpenApiCustomizer sharedAnswers() {
        return api -> {
            Map<String, Schema> problem = ModelConverters.getInstance().readAll(ApiSchemas.Problem.class);
            problem.forEach(api.getComponents()::addSchemas);
            // The streams' bodies are described as text/event-stream below, not as the buffers they are written in.
            api.getComponents().getSchemas().remove("DataBuffer");
            api.getPaths().forEach((path, item) -> {
                if (path.startsWith("/api/v1/")) {
                    item.readOperationsMap().forEach((method, operation) -> describe(path, method, operation));
                }
            });
        };
    }

    private static void describe(String path, PathItem.HttpMethod method, Operation operation) {
        operation.addSecurityItem(new SecurityRequirement().addList(BEARER));
        ApiResponses responses = operation.getResponses();
        boolean stream = path.endsWith("/events");
        responses.values().forEach(response -> jsonInsteadOfAny(response, stream));
        if (responses.get("204") != null) {
            responses.get("204").setContent(null); // no content, whatever the method's return type says
        }
        if (stream) {
            responses.get("200").setContent(new Content().addMediaType("text/event-stream", new MediaType()
                    .schema(new Schema<String>().type("string").description("Server-Sent Events: each frame has"
                            + " id, event (" + EVENT_NAMES + ") and one line of JSON data; a gap event without id"
                            + " where retention pruned events; comment lines keep the connection alive"))));
        }
        responses.addApiResponse("401", problem("No token, or a token that is not accepted"));
        if (!path.equals(ScopeRules.TOKEN_ROUTE)) {
            responses.addApiResponse("403", problem("The token lacks the scope this call needs (read, enqueue,"
                    + " work or admin); `detail` names it"));
            responses.addApiResponse("503", problem(unavailable(path, method, stream)));
        }
        if (operation.getRequestBody() != null) {
            responses.addApiResponse("400", problem("Malformed JSON, or a field of the wrong JSON type"));
            responses.addApiResponse("413", problem("The body or a payload is over its limit"));
            responses.addApiResponse("415", problem("The body is not JSON, or is sent compressed (a `Content-Encoding`"
                    + " other than `identity`)"));
            responses.addApiResponse("422", problem("Invalid values; `errors` names each field"));
        }
        if (path.contains("{queue}") || path.contains("{name}") || path.equals("/api/v1/tasks")) {
            responses.putIfAbsent("422", problem("Invalid values; `errors` names each field"));
        }
        if (path.contains("{id}")) {
            responses.addApiResponse("404", problem("No task with this id"));
        }
        if (path.contains("{name}") && method != PathItem.HttpMethod.PUT) {
            responses.addApiResponse("404", problem("No schedule with this name"));
        }
        if (CONFLICTS.contains(operation.getOperationId())) {
            responses.addApiResponse("409", problem("The task's state does not allow it; `state` says what it is"));
        }
        if (stream) {
            responses.addApiResponse("400", problem("Last-Event-ID is not a number"));
            operation.addParametersItem(new Parameter().in("query").name("access_token").required(false)
                    .description("The bearer token, as the browser's fallback: EventSource cannot send headers. Other"
                            + " clients send the header; proxies in front should keep this out of their access logs")
                    .schema(new Schema<String>().type("string")));
        }
    }

    /** What a 503 of this route can say: an unknown outcome only where something changes and may have. */
    private static String unavailable(String path, PathItem.HttpMethod method, boolean stream) {
        String unavailable = "The database is unavailable (\"Database unavailable\": the failed statement changed"
                + " nothing; retry after Retry-After)";
        if (method == PathItem.HttpMethod.GET) {
            return unavailable + (stream ? ", or the replica serves as many streams as it may" : "");
        }
        if (path.endsWith("/claims")) {
            return unavailable + "; a claim that went unanswered is released, so nothing of it is left";
        }
        return unavailable + ", or did not answer within the statement timeout (\"Outcome unknown\", `outcome:"
                + " unknown`: the change may have been made; " + (path.endsWith("/tasks") || path.endsWith("/tasks/batch")
                ? "retrying is safe with the same idempotency key, and an Idempotency-Key header is repeated in the answer)"
                : "read the state before retrying)");
    }

    private static void jsonInsteadOfAny(ApiResponse response, boolean stream) {
        Content content = response.getContent();
        if (content != null && content.containsKey("*/*")) {
            MediaType any = content.remove("*/*");
            content.addMediaType(stream ? "text/event-stream" : "application/json", any);
        }
    }

    private static ApiResponse problem(String description) {
        return new ApiResponse().description(description).content(new Content().addMediaType(PROBLEM,
                new MediaType().schema(new Schema<>().$ref("#/components/schemas/Problem"))));
    }
}
