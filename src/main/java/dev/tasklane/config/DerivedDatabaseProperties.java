package dev.tasklane.config;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;

/**
 * Lets one setting, {@code SPRING_R2DBC_URL}, say where the database is: the Flyway URL and
 * credentials and the LISTEN URL follow from it unless they are set themselves. Where the LISTEN
 * URL is set (a direct one, beside a main URL through PgBouncer), Flyway's follows it instead.
 *
 * <p>The values are computed when asked for, not when the environment is prepared, because
 * property sources added later (tests' dynamic properties, for one) may still change the R2DBC
 * URL. The source sits last, so anything set explicitly wins.
 */
final class DerivedDatabaseProperties implements EnvironmentPostProcessor, Ordered {

    static final String SOURCE_NAME = "tasklaneDerivedDatabaseProperties";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        environment.getPropertySources().addLast(new Source(environment));
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    private static final class Source extends PropertySource<Object> {

        // Not the property source's "source": Boot inspects that, and must not meet the
        // environment itself there.
        private final ConfigurableEnvironment environment;

        Source(ConfigurableEnvironment environment) {
            super(SOURCE_NAME);
            this.environment = environment;
        }

        @Override
        public @Nullable Object getProperty(String name) {
            return switch (name) {
                case "spring.r2dbc.url" -> DatabaseUrls.DEFAULT_R2DBC_URL;
                case "spring.r2dbc.username" -> urls().user() != null ? null : "postgres";
                case "spring.flyway.url" -> directUrls().jdbcUrl();
                case "spring.flyway.user" -> user();
                case "spring.flyway.password" -> password();
                case "spring.flyway.schemas" -> urls().schema();
                case "tasklane.listen-url" -> urls().listenUrl();
                default -> null;
            };
        }

        private DatabaseUrls urls() {
            return DatabaseUrls.parse(environment.getProperty("spring.r2dbc.url", DatabaseUrls.DEFAULT_R2DBC_URL));
        }

        // Migrations take the direct URL, as LISTEN does: Flyway holds a session-level lock, which
        // over PgBouncer in transaction mode could be taken on one server connection and released
        // on another. The schema is the main URL's.
        private DatabaseUrls directUrls() {
            String direct = environment.getProperty("tasklane.listen-url");
            return direct == null ? urls() : DatabaseUrls.parse(direct).withSchema(urls().schema());
        }

        // An empty setting counts as none: the URL's own credentials, if any, then apply.
        private String password() {
            String password = environment.getProperty("spring.r2dbc.password");
            if (password != null && !password.isEmpty()) {
                return password;
            }
            String inUrl = urls().password();
            return inUrl != null ? inUrl : "";
        }

        private String user() {
            String user = environment.getProperty("spring.r2dbc.username");
            if (user != null && !user.isEmpty()) {
                return user;
            }
            String inUrl = urls().user();
            return inUrl != null ? inUrl : "postgres";
        }
    }
}
