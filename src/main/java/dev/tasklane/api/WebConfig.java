package dev.tasklane.api;

import dev.tasklane.config.TasklaneProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Caps what a request body may buffer at {@code TASKLANE_MAX_REQUEST_BYTES} (413 beyond), and
 * answers {@code HEAD /}, which Boot's welcome page (GET only) leaves to a 404: uptime monitors
 * ask that way.
 */
@Configuration(proxyBeanMethods = false)
class WebConfig implements WebFluxConfigurer {

    private final int maxRequestBytes;

    WebConfig(TasklaneProperties properties) {
        this.maxRequestBytes = Math.toIntExact(properties.maxRequestBytes());
    }

    @Override
    public void configureHttpMessageCodecs(ServerCodecConfigurer configurer) {
        configurer.defaultCodecs().maxInMemorySize(maxRequestBytes);
    }

    @Bean
    RouterFunction<ServerResponse> dashboardHead() {
        return RouterFunctions.route(RequestPredicates.HEAD("/"),
                request -> ServerResponse.ok().contentType(MediaType.TEXT_HTML).build());
    }
}
