package dev.tasklane.config;

import org.jspecify.annotations.Nullable;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Turns trace export on exactly when an OTLP endpoint is set: Boot's
 * {@code MANAGEMENT_OPENTELEMETRY_TRACING_EXPORT_OTLP_ENDPOINT}, or its former name
 * {@code MANAGEMENT_OTLP_TRACING_ENDPOINT}, which Boot 4 no longer reads and which this carries
 * over. Off, there is no tracer at all (Boot's export switch alone would leave one making spans
 * of every request for nobody), so tracing costs the hot paths nothing. Explicit settings win, as
 * the source sits last.
 */
final class TracingSwitch extends DerivedSettings {

    static final String ENDPOINT = "management.opentelemetry.tracing.export.otlp.endpoint";
    static final String FORMER_ENDPOINT = "management.otlp.tracing.endpoint";
    static final String EXPORT_ENABLED = "management.tracing.export.enabled";
    static final String EXCLUDE = "spring.autoconfigure.exclude";
    /** Makes the tracer; without it no observation becomes a span. */
    static final String TRACER = "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration";

    TracingSwitch() {
        super("tasklaneTracingSwitch");
    }

    @Override
    @Nullable Object derive(String name, ConfigurableEnvironment environment) {
        return switch (name) {
            case ENDPOINT -> text(environment.getProperty(FORMER_ENDPOINT));
            case EXPORT_ENABLED -> on(environment) ? "true" : "false";
            case EXCLUDE -> on(environment) ? null : TRACER;
            default -> null;
        };
    }

    private static boolean on(ConfigurableEnvironment environment) {
        return text(environment.getProperty(ENDPOINT)) != null;
    }

    private static @Nullable String text(@Nullable String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
