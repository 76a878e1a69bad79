package dev.tasklane.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import dev.tasklane.config.TasklaneProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The bearer tokens this replica accepts, each with its scopes. An entry of
 * {@code TASKLANE_API_TOKENS} is {@code token} (every scope) or {@code token:scope+scope}, and the
 * token may be given as {@code sha256:<64 hex digits>} of the secret instead of the secret. Only
 * SHA-256 digests are kept, and a presented token is compared with every one in constant time.
 * With none configured, one is generated and logged once: the only time any token is logged.
 */
@Component
final class ApiTokens {

    private static final Logger log = LoggerFactory.getLogger(ApiTokens.class);
    private static final String DIGEST_PREFIX = "sha256:";

    /** One accepted token: the digest of its secret, and what it may do. */
    record Entry(byte[] digest, Set<Scope> scopes) {
    }

    private final List<Entry> entries;

    ApiTokens(TasklaneProperties properties) {
        List<String> tokens = properties.api().tokens();
        if (tokens.isEmpty()) {
            String generated = generate();
            log.warn("No TASKLANE_API_TOKENS set; generated this API token for this run only: {}"
                    + " (with several replicas, set TASKLANE_API_TOKENS)", generated);
            tokens = List.of(generated);
        }
        this.entries = tokens.stream().map(ApiTokens::entry).toList();
    }

    /** The scopes of the token, or empty when it is not accepted. */
    Optional<Set<Scope>> scopesOf(String token) {
        byte[] candidate = sha256(token);
        Set<Scope> scopes = null;
        for (Entry entry : entries) {
            if (MessageDigest.isEqual(entry.digest(), candidate) && scopes == null) {
                scopes = entry.scopes();
            }
        }
        return Optional.ofNullable(scopes);
    }

    /**
     * Reads one entry of the setting. The message of a failure never repeats the entry, which
     * holds a secret.
     */
    static Entry entry(String text) {
        String secretPart = text;
        String scopePart = null;
        int colon = text.startsWith(DIGEST_PREFIX) ? text.indexOf(':', DIGEST_PREFIX.length()) : text.indexOf(':');
        if (colon >= 0) {
            secretPart = text.substring(0, colon);
            scopePart = text.substring(colon + 1);
        }
        byte[] digest;
        if (secretPart.startsWith(DIGEST_PREFIX)) {
            String hex = secretPart.substring(DIGEST_PREFIX.length());
            if (!hex.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException("TASKLANE_API_TOKENS: a sha256: entry needs 64 hex digits"
                        + " (the SHA-256 of the token, e.g. printf %s \"$TOKEN\" | sha256sum)");
            }
            digest = HexFormat.of().parseHex(hex);
        } else if (secretPart.isEmpty()) {
            throw new IllegalArgumentException("TASKLANE_API_TOKENS: an entry has an empty token");
        } else {
            digest = sha256(secretPart);
        }
        return new Entry(digest, scopes(scopePart));
    }

    private static Set<Scope> scopes(String text) {
        if (text == null) {
            return EnumSet.allOf(Scope.class);
        }
        EnumSet<Scope> scopes = EnumSet.noneOf(Scope.class);
        for (String name : text.split("\\+", -1)) {
            scopes.add(Scope.fromWireName(name.strip()).orElseThrow(() -> new IllegalArgumentException(
                    "TASKLANE_API_TOKENS: unknown scope '" + name.strip() + "'; the scopes are read, enqueue, work"
                            + " and admin, joined with + (token:read+enqueue)")));
        }
        return Set.copyOf(scopes);
    }

    private static String generate() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
