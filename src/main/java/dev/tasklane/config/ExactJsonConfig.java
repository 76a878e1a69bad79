package dev.tasklane.config;

import dev.tasklane.support.ExactJson;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The application's JSON mapper (request bodies, answers, payloads read back for handlers) keeps
 * numbers exact, as jsonb does: see {@link ExactJson}.
 */
@Configuration(proxyBeanMethods = false)
class ExactJsonConfig {

    @Bean
    JsonMapperBuilderCustomizer exactNumbers() {
        return ExactJson::configure;
    }
}
