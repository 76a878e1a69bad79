package dev.tasklane.config;

import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;

/**
 * Settings that follow from other settings: a property source placed last, so anything set
 * explicitly wins, whose values are computed when asked for, not when the environment is
 * prepared, because property sources added later (tests' dynamic properties, for one) may still
 * change what they follow from.
 */
abstract class DerivedSettings implements EnvironmentPostProcessor, Ordered {

    private final String sourceName;

    DerivedSettings(String sourceName) {
        this.sourceName = sourceName;
    }

    /** The derived value of {@code name}, or null where this derives nothing. */
    abstract @Nullable Object derive(String name, ConfigurableEnvironment environment);

    @Override
    public final void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        environment.getPropertySources().addLast(new Source(sourceName, environment, this::derive));
    }

    @Override
    public final int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    private static final class Source extends PropertySource<Object> {

        // Not the property source's "source": Boot inspects that, and must not meet the
        // environment itself there.
        private final ConfigurableEnvironment environment;
        private final BiFunction<String, ConfigurableEnvironment, @Nullable Object> derive;

        Source(String name, ConfigurableEnvironment environment,
               BiFunction<String, ConfigurableEnvironment, @Nullable Object> derive) {
            super(name);
            this.environment = environment;
            this.derive = derive;
        }

        @Override
        public @Nullable Object getProperty(String name) {
            return derive.apply(name, environment);
        }
    }
}
