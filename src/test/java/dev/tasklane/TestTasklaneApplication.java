package dev.tasklane;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistrar;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * {@code ./mvnw spring-boot:test-run}: the service against a throwaway PostgreSQL in Docker, for
 * a machine with Docker and no PostgreSQL. Boot starts the container bean before the service
 * needs it and stops it on exit; the R2DBC URL points at it, and everything else follows from that
 * URL as in production.
 */
public final class TestTasklaneApplication {

    private TestTasklaneApplication() {
    }

    public static void main(String[] args) {
        SpringApplication.from(TasklaneApplication::main).with(DevelopmentDatabase.class).run(args);
    }

    @TestConfiguration(proxyBeanMethods = false)
    static class DevelopmentDatabase {

        @Bean
        PostgreSQLContainer postgres() {
            return new PostgreSQLContainer("postgres:17-alpine");
        }

        @Bean
        DynamicPropertyRegistrar databaseProperties(PostgreSQLContainer postgres) {
            return registry -> {
                registry.add("spring.r2dbc.url", () -> "r2dbc:postgresql://" + postgres.getHost() + ":"
                        + postgres.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT) + "/" + postgres.getDatabaseName());
                registry.add("spring.r2dbc.username", postgres::getUsername);
                registry.add("spring.r2dbc.password", postgres::getPassword);
            };
        }
    }
}
