package dev.tasklane.api;

import dev.tasklane.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

final class AuthIntegrationTests extends IntegrationTest {

    @Test
    void apiCallsWithoutATokenAre401WithBearerChallengeAndProblem() {
        anonymous().get().uri("/api/v1/tasks").exchange()
                .expectStatus().isUnauthorized()
                .expectHeader().valueEquals(HttpHeaders.WWW_AUTHENTICATE, "Bearer")
                .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.status").isEqualTo(401)
                .jsonPath("$.title").isNotEmpty()
                .jsonPath("$.detail").isNotEmpty();
        anonymous().post().uri("/api/v1/queues/q/tasks").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"type\": \"noop\"}").exchange().expectStatus().isUnauthorized().expectBody();
    }

    @Test
    void aWrongTokenIs401() {
        anonymous().get().uri("/api/v1/tasks").header(HttpHeaders.AUTHORIZATION, "Bearer wrong").exchange()
                .expectStatus().isUnauthorized()
                .expectHeader().valueMatches(HttpHeaders.WWW_AUTHENTICATE, "Bearer.*");
        anonymous().get().uri("/api/v1/tasks").header(HttpHeaders.AUTHORIZATION, "Basic dXNlcjpwYXNz").exchange()
                .expectStatus().isUnauthorized().expectBody();
        anonymous().get().uri("/api/v1/tasks").header(HttpHeaders.AUTHORIZATION, "Bearer").exchange()
                .expectStatus().isUnauthorized().expectBody();
    }

    @Test
    void everyConfiguredTokenIsAccepted() {
        anonymous().get().uri("/api/v1/tasks").header(HttpHeaders.AUTHORIZATION, "Bearer second-token").exchange()
                .expectStatus().isOk().expectBody();
    }

    @Test
    void theAccessTokenQueryParameterIsRefusedOutsideTheEventStreams() {
        anonymous().get().uri("/api/v1/tasks?access_token=" + TOKEN).exchange().expectStatus().isUnauthorized().expectBody();
    }

    @Test
    void healthProbesAndPrometheusAreOpen() {
        anonymous().get().uri("/actuator/health/liveness").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
        anonymous().get().uri("/actuator/health/readiness").exchange().expectStatus().isOk().expectBody();
        anonymous().get().uri("/actuator/prometheus").exchange().expectStatus().isOk().expectBody();
    }

    @Test
    void theDashboardIsOpenAlsoToAHeadRequest() {
        anonymous().get().uri("/").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(org.springframework.http.MediaType.TEXT_HTML).expectBody();
        anonymous().head().uri("/").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(org.springframework.http.MediaType.TEXT_HTML);
        anonymous().head().uri("/app.css").exchange().expectStatus().isOk();
    }

    @Test
    void otherActuatorEndpointsAreClosedEvenWithAToken() {
        for (String path : new String[] {"/actuator", "/actuator/env", "/actuator/beans", "/actuator/metrics"}) {
            anonymous().get().uri(path).exchange().expectStatus().value(status ->
                    org.assertj.core.api.Assertions.assertThat(status).isIn(401, 403, 404));
            api().get().uri(path).exchange().expectStatus().value(status ->
                    org.assertj.core.api.Assertions.assertThat(status).isIn(403, 404));
        }
    }
}
