package dev.tasklane.testsupport;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Gives a replica started in the test JVM event loops of its own. With Boot's default (Reactor
 * Netty's global resources) closing one replica disposes the loops every other context and
 * test client in the JVM is using, and their requests fail or hang.
 */
@Configuration(proxyBeanMethods = false)
class OwnNettyResources {

    @Bean
    ReactorResourceFactory reactorResourceFactory() {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        return factory;
    }
}
