package dev.tasklane.testsupport;

import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test during which BlockHound found a blocking call on a non-blocking thread, in any
 * replica or client of the test JVM, and shows where. Registered for every test (see
 * {@code junit-platform.properties}); {@link BlockingCallsSeen} records the calls.
 */
public final class NoBlockingCalls implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(NoBlockingCalls.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put("before", BlockingCallsSeen.count());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        int before = context.getStore(NAMESPACE).get("before", Integer.class);
        int found = BlockingCallsSeen.count() - before;
        if (found > 0) {
            throw new AssertionError(found + " blocking call(s) on non-blocking threads during this test:\n"
                    + BlockingCallsSeen.seen().stream().skip(before).map(BlockingCallsSeen.Seen::describe)
                    .collect(Collectors.joining("\n")));
        }
    }
}
