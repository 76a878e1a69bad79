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
        context.getStore(NAMESPACE).put("unexpected", BlockingCallsSeen.count());
        context.getStore(NAMESPACE).put("all", BlockingCallsSeen.found());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        int found = BlockingCallsSeen.count() - context.getStore(NAMESPACE).get("unexpected", Integer.class);
        if (found > 0) {
            throw new AssertionError(found + " blocking call(s) on non-blocking threads during this test:\n"
                    + BlockingCallsSeen.seen().stream().skip(context.getStore(NAMESPACE).get("all", Integer.class))
                    .map(BlockingCallsSeen.Seen::describe).collect(Collectors.joining("\n")));
        }
    }
}
