package dev.tasklane.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.tasklane.testsupport.IntegrationTest;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.info.BuildProperties;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The generated OpenAPI document describes the contract (every route, its answers, the bearer
 * scheme) and is valid for a real parser and for a client generator.
 */
final class OpenApiIntegrationTests extends IntegrationTest {

    /** Where the build's client generator reads the document. */
    private static final Path GENERATOR_INPUT = Path.of("target", "openapi", "tasklane.json");

    @Autowired
    private BuildProperties build;

    /** Every route of the contract's API, as method and path. */
    private static final List<String> CONTRACT = List.of(
            "post /api/v1/queues/{queue}/tasks",
            "post /api/v1/queues/{queue}/tasks/batch",
            "get /api/v1/tasks/{id}",
            "get /api/v1/tasks",
            "post /api/v1/tasks/{id}/cancel",
            "post /api/v1/tasks/{id}/retry",
            "delete /api/v1/tasks/{id}",
            "post /api/v1/queues/{queue}/claims",
            "post /api/v1/tasks/{id}/heartbeat",
            "post /api/v1/tasks/{id}/progress",
            "post /api/v1/tasks/{id}/complete",
            "post /api/v1/tasks/{id}/fail",
            "post /api/v1/tasks/{id}/snooze",
            "post /api/v1/tasks/{id}/release",
            "get /api/v1/tasks/{id}/events",
            "get /api/v1/events",
            "get /api/v1/queues",
            "post /api/v1/queues/{queue}/pause",
            "post /api/v1/queues/{queue}/resume",
            "patch /api/v1/queues/{queue}",
            "post /api/v1/tasks/retry",
            "post /api/v1/tasks/cancel",
            "post /api/v1/tasks/delete",
            "get /api/v1/workers",
            "get /api/v1/token",
            "put /api/v1/schedules/{name}",
            "get /api/v1/schedules",
            "get /api/v1/schedules/{name}",
            "delete /api/v1/schedules/{name}",
            "post /api/v1/schedules/{name}/pause",
            "post /api/v1/schedules/{name}/resume",
            "post /api/v1/schedules/{name}/trigger");

    private static final Map<String, List<String>> EXPECTED_ANSWERS = Map.of(
            "post /api/v1/queues/{queue}/tasks", List.of("200", "201", "403", "400", "401", "503", "413", "415", "422"),
            "post /api/v1/tasks/{id}/cancel", List.of("200", "401", "503", "403", "404", "409"),
            "delete /api/v1/tasks/{id}", List.of("204", "401", "503", "403", "404", "409"),
            "post /api/v1/tasks/{id}/complete", List.of("200", "400", "403", "401", "503", "404", "409", "413", "415", "422"),
            "get /api/v1/tasks/{id}/events", List.of("200", "204", "403", "400", "401", "503", "404"),
            "get /api/v1/tasks", List.of("200", "401", "503", "403", "422"),
            "patch /api/v1/queues/{queue}", List.of("200", "400", "403", "401", "503", "413", "415", "422"),
            "put /api/v1/schedules/{name}", List.of("200", "201", "403", "400", "401", "503", "413", "415", "422"),
            "post /api/v1/schedules/{name}/trigger", List.of("201", "401", "503", "403", "404", "422"),
            "delete /api/v1/schedules/{name}", List.of("204", "401", "503", "403", "404", "422"));

    @Test
    void theDocumentListsEveryRouteOfTheContractWithItsAnswersAndTheBearerScheme() {
        JsonNode document = document("/v3/api-docs");

        List<String> routes = new ArrayList<>();
        document.get("paths").properties().forEach(path -> path.getValue().properties()
                .forEach(operation -> routes.add(operation.getKey() + " " + path.getKey())));
        assertThat(routes).containsExactlyInAnyOrderElementsOf(CONTRACT);

        assertThat(document.at("/components/securitySchemes/bearer/type").stringValue()).isEqualTo("http");
        assertThat(document.at("/components/securitySchemes/bearer/scheme").stringValue()).isEqualTo("bearer");
        for (String route : CONTRACT) {
            JsonNode operation = operation(document, route);
            assertThat(operation.at("/security/0/bearer").isArray()).as(route + " security").isTrue();
            assertThat(operation.get("summary")).as(route + " summary").isNotNull();
            assertThat(operation.get("responses").propertyNames()).as(route)
                    .anyMatch(status -> status.startsWith("2")).contains("401");
        }
        EXPECTED_ANSWERS.forEach((route, statuses) ->
                assertThat(operation(document, route).get("responses").propertyNames()).as(route)
                        .containsExactlyInAnyOrderElementsOf(statuses));
        assertThat(operation(document, "get /api/v1/tasks/{id}").at("/responses/404/content/application~1problem+json"
                + "/schema/$ref").stringValue()).isEqualTo("#/components/schemas/Problem");
    }

    @Test
    void requestBodiesAndTasksHaveSchemasWithTheContractsFields() {
        JsonNode document = document("/v3/api-docs");
        JsonNode schemas = document.at("/components/schemas");

        assertThat(operation(document, "post /api/v1/queues/{queue}/tasks")
                .at("/requestBody/content/application~1json/schema/$ref").stringValue())
                .isEqualTo("#/components/schemas/EnqueueRequest");
        assertThat(schemas.at("/EnqueueRequest/properties").propertyNames()).containsExactlyInAnyOrder(
                "type", "payload", "priority", "runAt", "delaySeconds", "maxAttempts", "idempotencyKey",
                "timeoutSeconds", "concurrencyKey", "maxSnoozes", "unique", "debounce");
        assertThat(schemas.at("/UniqueOptions/properties").propertyNames()).containsExactlyInAnyOrder(
                "key", "scope", "windowSeconds");
        assertThat(schemas.at("/DebounceOptions/required").toString()).contains("key").contains("delaySeconds");
        assertThat(schemas.at("/BulkRequest/properties").propertyNames()).containsExactlyInAnyOrder("ids", "queue",
                "state", "type", "concurrencyKey", "schedule", "createdBefore", "limit");
        assertThat(operation(document, "post /api/v1/queues/{queue}/tasks").get("parameters").findValuesAsString("name"))
                .contains("traceparent");
        assertThat(operation(document, "post /api/v1/queues/{queue}/tasks/batch").get("parameters").findValuesAsString("name"))
                .contains("traceparent");
        assertThat(operation(document, "get /api/v1/tasks").get("parameters").findValuesAsString("name"))
                .contains("queue", "state", "type", "concurrencyKey", "schedule", "limit", "before");
        assertThat(schemas.at("/SchedulePutRequest/properties").propertyNames()).containsExactlyInAnyOrder(
                "cron", "timezone", "queue", "task", "overlap", "catchUp", "paused");
        assertThat(schemas.at("/ScheduleJson/properties").propertyNames()).contains("nextRuns", "lastFire");
        assertThat(schemas.at("/QueuePatch/properties").propertyNames()).containsExactlyInAnyOrder(
                "maxRunning", "maxRunningPerKey", "rate", "ratePerKey", "fairness");
        assertThat(schemas.at("/RateLimit/required").toString()).contains("count").contains("periodSeconds");
        assertThat(schemas.at("/EnqueueRequest/required").toString()).contains("type");
        assertThat(schemas.at("/ClaimRequest/properties").propertyNames()).containsExactlyInAnyOrder(
                "workerId", "max", "leaseSeconds", "waitSeconds", "types");
        assertThat(schemas.at("/FailRequest/properties").propertyNames()).containsExactlyInAnyOrder(
                "workerId", "leaseId", "error", "retry");
        assertThat(schemas.at("/ReleaseRequest/properties").propertyNames()).containsExactlyInAnyOrder(
                "workerId", "leaseId", "reason");
        assertThat(schemas.at("/ReleaseRequest/required").toString()).contains("workerId").contains("leaseId");
        assertThat(operation(document, "post /api/v1/tasks/{id}/release").get("responses").propertyNames())
                .containsExactlyInAnyOrder("200", "400", "401", "503", "403", "404", "409", "413", "415", "422");
        assertThat(schemas.at("/TaskJson/properties").propertyNames()).containsExactlyInAnyOrder("id", "queue", "type",
                "payload", "state", "priority", "attempt", "maxAttempts", "runAt", "createdAt", "startedAt",
                "finishedAt", "workerId", "leaseId", "leaseExpiresAt", "timeoutSeconds", "timeoutAt", "progress",
                "result", "lastError", "idempotencyKey", "concurrencyKey", "snoozes", "maxSnoozes", "uniqueKey",
                "schedule", "scheduledFor", "traceparent", "deduplicated", "debounced");
        assertThat(schemas.at("/Problem/properties").propertyNames()).contains("status", "title", "detail", "errors");
    }

    /**
     * Also saves the document where the build's client generator reads it (see the pom): a
     * document no generator can use fails the build right after the tests.
     */
    @Test
    void aRealOpenApiParserReportsNothingAndEveryReferenceResolves() throws Exception {
        String text = anonymous().get().uri("/v3/api-docs").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        Files.createDirectories(GENERATOR_INPUT.getParent());
        Files.writeString(GENERATOR_INPUT, text);

        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        SwaggerParseResult parsed = new OpenAPIV3Parser().readContents(text, null, options);
        assertThat(parsed.getMessages()).as("errors and warnings of the parser").isEmpty();
        assertThat(parsed.getOpenAPI()).isNotNull();

        JsonNode document = JsonMapper.builder().build().readTree(text);
        List<String> refs = new ArrayList<>();
        collectRefs(document, refs);
        assertThat(refs).isNotEmpty().allSatisfy(ref -> assertThat(document.at(ref.substring(1)).isMissingNode())
                .as(ref + " resolves").isFalse());
        assertThat(document.at("/components/schemas/FieldError/properties").propertyNames())
                .containsExactlyInAnyOrder("field", "message");

        assertThat(document.at("/info/license/name").stringValue()).isEqualTo("Apache-2.0");
        assertThat(document.at("/info/version").stringValue()).isEqualTo(build.getVersion());
        assertThat(document.at("/servers/0/url").stringValue()).isEqualTo("/");
        document.get("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            String route = operation.getKey() + " " + path.getKey();
            assertThat(operation.getValue().get("operationId")).as(route + " operationId").isNotNull();
            operation.getValue().get("responses").properties().stream()
                    .filter(answer -> answer.getKey().startsWith("4") || answer.getKey().startsWith("5"))
                    .forEach(answer -> assertThat(answer.getValue().at("/content/application~1problem+json/schema/$ref")
                            .stringValue()).as(route + " " + answer.getKey()).isEqualTo("#/components/schemas/Problem"));
        }));
        for (String stream : List.of("get /api/v1/events", "get /api/v1/tasks/{id}/events")) {
            JsonNode operation = operation(document, stream);
            assertThat(operation.at("/responses/200/content").propertyNames()).as(stream).containsExactly("text/event-stream");
            assertThat(operation.at("/responses/200/content/text~1event-stream/schema/description").stringValue())
                    .contains("queued, running, progress, succeeded, failed, cancelled");
            assertThat(operation.get("parameters").findValuesAsString("name")).as(stream).contains("access_token");
        }
    }

    private static void collectRefs(JsonNode node, List<String> refs) {
        if (node.isObject()) {
            node.properties().forEach(field -> {
                if (field.getKey().equals("$ref")) {
                    refs.add(field.getValue().stringValue());
                } else {
                    collectRefs(field.getValue(), refs);
                }
            });
        } else if (node.isArray()) {
            node.forEach(item -> collectRefs(item, refs));
        }
    }

    @Test
    void swaggerUiIsServedWithoutAToken() {
        anonymous().get().uri("/swagger-ui.html").exchange().expectStatus().is3xxRedirection().expectBody();
        anonymous().get().uri("/swagger-ui/index.html").exchange().expectStatus().isOk().expectBody();
        assertThat(anonymous().get().uri("/v3/api-docs.yaml").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody()).startsWith("openapi: 3.1");
    }

    private JsonNode document(String uri) {
        String body = anonymous().get().uri(uri).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        return JsonMapper.builder().build().readTree(body);
    }

    private static JsonNode operation(JsonNode document, String route) {
        String[] parts = route.split(" ", 2);
        return document.get("paths").get(parts[1]).get(parts[0]);
    }
}
