package dev.tasklane.config;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

final class TracingSwitchTests {

    @Test
    void withoutAnEndpointTracingIsOffAndTheTracerLeftOut() {
        StandardEnvironment environment = environment(Map.of());
        assertThat(environment.getProperty(TracingSwitch.EXPORT_ENABLED)).isEqualTo("false");
        assertThat(environment.getProperty(TracingSwitch.EXCLUDE)).isEqualTo(TracingSwitch.TRACER);
    }

    @Test
    void bootsEndpointOrItsFormerNameTurnsItOn() {
        for (String name : new String[] {TracingSwitch.ENDPOINT, TracingSwitch.FORMER_ENDPOINT}) {
            StandardEnvironment environment = environment(Map.of(name, "http://collector:4318/v1/traces"));
            assertThat(environment.getProperty(TracingSwitch.EXPORT_ENABLED)).as(name).isEqualTo("true");
            assertThat(environment.getProperty(TracingSwitch.EXCLUDE)).as(name).isNull();
            assertThat(environment.getProperty(TracingSwitch.ENDPOINT)).as(name).isEqualTo("http://collector:4318/v1/traces");
        }
    }

    @Test
    void anExplicitSwitchWins() {
        StandardEnvironment environment = environment(Map.of(TracingSwitch.ENDPOINT, "http://collector:4318/v1/traces",
                TracingSwitch.EXPORT_ENABLED, "false"));
        assertThat(environment.getProperty(TracingSwitch.EXPORT_ENABLED)).isEqualTo("false");
    }

    private static StandardEnvironment environment(Map<String, Object> settings) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new MapPropertySource("settings", new HashMap<>(settings)));
        new TracingSwitch().postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }
}
