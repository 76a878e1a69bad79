package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;

import dev.tasklane.config.TasklaneProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The bearer tokens this replica accepts. Only their SHA-256 digests are kept, and they are
 * compared in constant time. With none configured, one is generated and logged once: the only
 * time any token is logged.
 */
@Component
final class ApiTokens {

    private static final Logger log = LoggerFactory.getLogger(ApiTokens.class);

    private final List<byte[]> digests;

    ApiTokens(TasklaneProperties properties) {
        List<String> tokens = properties.api().tokens();
        if (tokens.isEmpty()) {
            String generated = generate();
            log.warn("No TASKLANE_API_TOKENS set; generated this API token for this run only: {}"
                    + " (with several replicas, set TASKLANE_API_TOKENS)", generated);
            tokens = List.of(generated);
        }
        this.digests = tokens.stream().map(ApiTokens::sha256).toList();
    }

    boolean accepts(String token) {
        byte[] candidate = sha256(token);
        boolean accepted = false;
        for (byte[] digest : digests) {
            accepted |= MessageDigest.isEqual(digest, candidate);
        }
        return accepted;
    }

    private static String generate() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
