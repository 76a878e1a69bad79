package dev.tasklane.api;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which {@code traceparent} headers are kept, and in what form, after the W3C recommendation. */
final class TraceParentsTests {

    private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";
    private static final String PARENT = "b7ad6b7169203331";

    @Test
    void aVersion00HeaderIsKeptAsSent() {
        assertThat(TraceParents.valid("00-" + TRACE + "-" + PARENT + "-01")).isEqualTo("00-" + TRACE + "-" + PARENT + "-01");
        assertThat(TraceParents.valid(" 00-" + TRACE + "-" + PARENT + "-03 ")).isEqualTo("00-" + TRACE + "-" + PARENT + "-03");
    }

    @Test
    void aLaterVersionIsReadByItsFirstFieldsAndKeptAsVersion00WithOnlyTheSampledFlag() {
        assertThat(TraceParents.valid("01-" + TRACE + "-" + PARENT + "-01")).isEqualTo("00-" + TRACE + "-" + PARENT + "-01");
        assertThat(TraceParents.valid("cc-" + TRACE + "-" + PARENT + "-09-what-comes-later"))
                .isEqualTo("00-" + TRACE + "-" + PARENT + "-01");
        assertThat(TraceParents.valid("02-" + TRACE + "-" + PARENT + "-fe")).isEqualTo("00-" + TRACE + "-" + PARENT + "-00");
    }

    @Test
    void whatTheRecommendationCallsInvalidIsDropped() {
        assertThat(TraceParents.valid(null)).isNull();
        assertThat(TraceParents.valid("")).isNull();
        assertThat(TraceParents.valid("nonsense")).isNull();
        // version 00 with anything after its four fields
        assertThat(TraceParents.valid("00-" + TRACE + "-" + PARENT + "-01-extra")).isNull();
        // version ff, upper-case hex, all-zero ids
        assertThat(TraceParents.valid("ff-" + TRACE + "-" + PARENT + "-01")).isNull();
        assertThat(TraceParents.valid("00-" + TRACE.toUpperCase() + "-" + PARENT + "-01")).isNull();
        assertThat(TraceParents.valid("00-" + "0".repeat(32) + "-" + PARENT + "-01")).isNull();
        assertThat(TraceParents.valid("00-" + TRACE + "-" + "0".repeat(16) + "-01")).isNull();
        // a later version must still follow its first 55 characters with a dash, or end there
        assertThat(TraceParents.valid("01-" + TRACE + "-" + PARENT + "-01x")).isNull();
        assertThat(TraceParents.valid("01-" + TRACE + "-" + PARENT + "-0")).isNull();
        assertThat(TraceParents.valid("1-" + TRACE + "-" + PARENT + "-01")).isNull();
    }
}
