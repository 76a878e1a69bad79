package dev.tasklane.testsupport;

import java.time.Duration;

import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The shared application context of the integration tests: one replica on the test database,
 * with a known token, no in-process queues and no maintenance loops (so that a cached context
 * never takes or prunes another test's rows). Tests keep apart by using their own queue names.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "tasklane.api.tokens=" + IntegrationTest.TOKEN + ",second-token," + IntegrationTest.SCOPED_TOKENS,
        "tasklane.worker.queues=",
        "tasklane.maintenance.enabled=false"
})
@AutoConfigureWebTestClient
@ExtendWith(ThreadDumpOnTimeout.class)
public abstract class IntegrationTest {

    public static final String TOKEN = "test-token";

    /**
     * A token per scope ({@code read-token} has only read, ...), and {@code hashed-token} given
     * as its SHA-256, with read and enqueue.
     */
    public static final String SCOPED_TOKENS = "read-token:read,enqueue-token:enqueue,work-token:work,"
            + "admin-token:admin,sha256:550643f45e135491c47bea94823b37278d5dd91375b285d44001d005d1603a33:read+enqueue";

    @Autowired
    private WebTestClient webTestClient;
    @LocalServerPort
    private int port;

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        TestDatabase.Coordinates database = TestDatabase.get();
        registry.add("spring.r2dbc.url", database::r2dbcUrl);
        registry.add("spring.r2dbc.username", database::user);
        registry.add("spring.r2dbc.password", database::password);
    }

    /** A client that sends the test token. */
    protected WebTestClient api() {
        return anonymous().mutate().defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).build();
    }

    /** A client that sends no token. */
    protected WebTestClient anonymous() {
        // An address, not "localhost": nothing to resolve on a client event loop.
        return webTestClient.mutate().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(30))
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(32 * 1024 * 1024))
                .build();
    }
}
