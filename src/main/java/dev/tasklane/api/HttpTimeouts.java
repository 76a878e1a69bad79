package dev.tasklane.api;

import dev.tasklane.config.TasklaneProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Timeouts of the HTTP server that apply only while a request is being received: a client that
 * sends half a request (headers or body) and stops is dropped after
 * {@code TASKLANE_API_REQUEST_TIMEOUT}. Idle keep-alive connections close after
 * {@code SERVER_NETTY_IDLE_TIMEOUT} (Boot's own setting). Nothing bounds the time a response
 * takes: long polls and event streams are legitimately silent.
 */
@Configuration(proxyBeanMethods = false)
class HttpTimeouts {

    @Bean
    NettyServerCustomizer requestTimeouts(TasklaneProperties properties) {
        return server -> server
                .readTimeout(properties.api().requestTimeout())
                .requestTimeout(properties.api().requestTimeout());
    }
}
