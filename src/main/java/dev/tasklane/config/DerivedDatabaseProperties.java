package dev.tasklane.config;

import org.jspecify.annotations.Nullable;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Lets one setting, {@code SPRING_R2DBC_URL}, say where the database is: the Flyway URL and
 * credentials and the LISTEN URL follow from it unless they are set themselves. Where the LISTEN
 * URL is set (a direct one, beside a main URL through PgBouncer), Flyway's follows it instead.
 */
final class DerivedDatabaseProperties extends DerivedSettings {

    static final String SOURCE_NAME = "tasklaneDerivedDatabaseProperties";

    DerivedDatabaseProperties() {
        super(SOURCE_NAME);
    }

    @Override
    @Nullable Object derive(String name, ConfigurableEnvironment environment) {
        Urls urls = new Urls(environment);
        return switch (name) {
            case "spring.r2dbc.url" -> DatabaseUrls.DEFAULT_R2DBC_URL;
            case "spring.r2dbc.username" -> urls.main().user() != null ? null : "postgres";
            case "spring.flyway.url" -> urls.direct().jdbcUrl();
            case "spring.flyway.user" -> urls.user();
            case "spring.flyway.password" -> urls.password();
            case "spring.flyway.schemas" -> urls.main().schema();
            case "tasklane.listen-url" -> urls.main().listenUrl();
            default -> null;
        };
    }

    private record Urls(ConfigurableEnvironment environment) {

        DatabaseUrls main() {
            return DatabaseUrls.parse(environment.getProperty("spring.r2dbc.url", DatabaseUrls.DEFAULT_R2DBC_URL));
        }

        // Migrations take the direct URL, as LISTEN does: Flyway holds a session-level lock, which
        // over PgBouncer in transaction mode could be taken on one server connection and released
        // on another. The schema is the main URL's.
        DatabaseUrls direct() {
            String direct = environment.getProperty("tasklane.listen-url");
            return direct == null ? main() : DatabaseUrls.parse(direct).withSchema(main().schema());
        }

        // An empty setting counts as none: the URL's own credentials, if any, then apply.
        String password() {
            String password = environment.getProperty("spring.r2dbc.password");
            if (password != null && !password.isEmpty()) {
                return password;
            }
            String inUrl = main().password();
            return inUrl != null ? inUrl : "";
        }

        String user() {
            String user = environment.getProperty("spring.r2dbc.username");
            if (user != null && !user.isEmpty()) {
                return user;
            }
            String inUrl = main().user();
            return inUrl != null ? inUrl : "postgres";
        }
    }
}
