package dev.tasklane.config;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class DatabaseUrlsTests {

    @Test
    void theDefaultUrlPointsAtTasklaneOnLocalhost() {
        DatabaseUrls urls = DatabaseUrls.parse(DatabaseUrls.DEFAULT_R2DBC_URL);
        assertThat(urls.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost:5432/tasklane");
        assertThat(urls.listenUrl()).isEqualTo("r2dbc:postgresql://localhost:5432/tasklane");
    }

    @Test
    void flywayAndListenUrlsKeepHostPortDatabaseSslModeAndSchema() {
        DatabaseUrls urls = DatabaseUrls.parse("r2dbc:pool:postgresql://db.internal:6543/jobs?sslMode=require&schema=queue&maxSize=30");
        assertThat(urls.jdbcUrl()).isEqualTo("jdbc:postgresql://db.internal:6543/jobs?sslmode=require&currentSchema=queue");
        assertThat(urls.listenUrl()).isEqualTo("r2dbc:postgresql://db.internal:6543/jobs?sslMode=require&schema=queue");
        assertThat(urls.jdbcUrl("postgres")).isEqualTo("jdbc:postgresql://db.internal:6543/postgres?sslmode=require");
    }

    @Test
    void theCaOfVerifyFullGoesToMigrationsAndListenToo() {
        DatabaseUrls urls = DatabaseUrls.parse("r2dbc:postgresql://db:5432/tasklane?sslMode=verify-full"
                + "&sslRootCert=/etc/tasklane/db-ca/ca.crt");
        assertThat(urls.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/tasklane?sslmode=verify-full"
                + "&sslrootcert=/etc/tasklane/db-ca/ca.crt");
        assertThat(urls.listenUrl()).isEqualTo("r2dbc:postgresql://db:5432/tasklane?sslMode=verify-full"
                + "&sslRootCert=/etc/tasklane/db-ca/ca.crt");
    }

    @Test
    void credentialsInTheUrlAreReadButNeverPrinted() {
        DatabaseUrls urls = DatabaseUrls.parse("r2dbc:postgresql://app:s3cret@db:5432/jobs");
        assertThat(urls.user()).isEqualTo("app");
        assertThat(urls.password()).isEqualTo("s3cret");
        assertThat(urls.toString()).doesNotContain("s3cret");
        assertThat(urls.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/jobs");
    }
}
