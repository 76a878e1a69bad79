package dev.tasklane.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.tasklane.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The generated OpenAPI document describes the contract: every route, its answers, the bearer scheme. */
final class OpenApiIntegrationTests extends IntegrationTest {

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
            "put /api/v1/schedules/{name}",
            "get /api/v1/schedules",
            "get /api/v1/schedules/{name}",
            "delete /api/v1/schedules/{name}",
            "post /api/v1/schedules/{name}/pause",
            "post /api/v1/schedules/{name}/resume",
            "post /api/v1/schedules/{name}/trigger");

    private static final Map<String, List<String>> EXPECTED_ANSWERS = Map.of(
            "post /api/v1/queues/{queue}/tasks", List.of("200", "201", "400", "401", "413", "415", "422"),
            "post /api/v1/tasks/{id}/cancel", List.of("200", "401", "404", "409"),
            "delete /api/v1/tasks/{id}", List.of("204", "401", "404", "409"),
            "post /api/v1/tasks/{id}/complete", List.of("200", "400", "401", "404", "409", "413", "415", "422"),
            "get /api/v1/tasks/{id}/events", List.of("200", "204", "400", "401", "404"),
            "get /api/v1/tasks", List.of("200", "401", "422"),
            "patch /api/v1/queues/{queue}", List.of("200", "400", "401", "413", "415", "422"),
            "put /api/v1/schedules/{name}", List.of("200", "201", "400", "401", "413", "415", "422"),
            "post /api/v1/schedules/{name}/trigger", List.of("201", "401", "404", "422"),
            "delete /api/v1/schedules/{name}", List.of("204", "401", "404", "422"));

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
        assertThat(schemas.at("/TaskJson/properties").propertyNames()).containsExactlyInAnyOrder("id", "queue", "type",
                "payload", "state", "priority", "attempt", "maxAttempts", "runAt", "createdAt", "startedAt",
                "finishedAt", "workerId", "leaseId", "leaseExpiresAt", "timeoutSeconds", "timeoutAt", "progress",
                "result", "lastError", "idempotencyKey", "concurrencyKey", "snoozes", "maxSnoozes", "uniqueKey",
                "schedule", "scheduledFor", "deduplicated", "debounced");
        assertThat(schemas.at("/Problem/properties").propertyNames()).contains("status", "title", "detail", "errors");
    }

    @Test
    void swaggerUiIsServedWithoutAToken() {
        anonymous().get().uri("/swagger-ui.html").exchange().expectStatus().is3xxRedirection().expectBody();
        anonymous().get().uri("/swagger-ui/index.html").exchange().expectStatus().isOk().expectBody();
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
