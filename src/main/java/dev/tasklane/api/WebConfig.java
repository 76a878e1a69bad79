package dev.tasklane.api;

import dev.tasklane.config.TasklaneProperties;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/** Caps what a request body may buffer at {@code TASKLANE_MAX_REQUEST_BYTES} (413 beyond). */
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
}
