package dev.tasklane.config;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

final class DerivedDatabasePropertiesTests {

    @Test
    void flywayAndListenFollowTheMainUrlWhenNothingElseIsSet() {
        StandardEnvironment environment = environment(Map.of(
                "spring.r2dbc.url", "r2dbc:postgresql://db:5432/jobs?schema=queue", "spring.r2dbc.username", "app"));
        assertThat(environment.getProperty("spring.flyway.url")).isEqualTo("jdbc:postgresql://db:5432/jobs?currentSchema=queue");
        assertThat(environment.getProperty("spring.flyway.user")).isEqualTo("app");
        assertThat(environment.getProperty("tasklane.listen-url")).isEqualTo("r2dbc:postgresql://db:5432/jobs?schema=queue");
    }

    @Test
    void behindPgBouncerMigrationsTakeTheDirectListenUrlWithTheMainUrlsSchema() {
        StandardEnvironment environment = environment(Map.of(
                "spring.r2dbc.url", "r2dbc:postgresql://pgbouncer:6432/jobs?schema=queue&preparedStatementCacheQueries=0",
                "tasklane.listen-url", "r2dbc:postgresql://db:5432/jobs?sslMode=require"));
        assertThat(environment.getProperty("spring.flyway.url"))
                .isEqualTo("jdbc:postgresql://db:5432/jobs?sslmode=require&currentSchema=queue");
    }

    private static StandardEnvironment environment(Map<String, Object> settings) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("settings", new HashMap<>(settings)));
        new DerivedDatabaseProperties().postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }
}
