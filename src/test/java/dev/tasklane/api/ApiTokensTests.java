package dev.tasklane.api;

import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The entries of TASKLANE_API_TOKENS: a token, its scopes, or its SHA-256 in place of it. */
final class ApiTokensTests {

    @Test
    void anEntryWithoutScopesHasThemAllAndScopesJoinWithPlus() {
        assertThat(ApiTokens.entry("s3cret").scopes()).containsExactlyInAnyOrder(Scope.values());
        assertThat(ApiTokens.entry("s3cret:read+work").scopes()).isEqualTo(Set.of(Scope.READ, Scope.WORK));
        assertThat(ApiTokens.entry("sha256:" + "ab".repeat(32) + ":enqueue").scopes()).isEqualTo(Set.of(Scope.ENQUEUE));
        assertThat(ApiTokens.entry("sha256:" + "AB".repeat(32)).digest()).hasSize(32);
    }

    @Test
    void anUnknownScopeOrABadDigestStopsTheStartWithAMessageThatHoldsNoSecret() {
        assertThatThrownBy(() -> ApiTokens.entry("s3cret:read+root")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown scope 'root'").hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> ApiTokens.entry("s3cret:")).hasMessageContaining("unknown scope ''");
        assertThatThrownBy(() -> ApiTokens.entry("sha256:abc")).hasMessageContaining("64 hex digits");
        assertThatThrownBy(() -> ApiTokens.entry(":read")).hasMessageContaining("empty token");
    }
}
