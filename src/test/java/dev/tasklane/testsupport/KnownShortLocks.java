package dev.tasklane.testsupport;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Locks that libraries hold for a few microseconds while they fill a cache once per type. They
 * park a thread only under contention, so they are not the blocking BlockHound exists to find.
 */
public final class KnownShortLocks implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("tools.jackson.databind.deser.DeserializerCache",
                "_createAndCacheValueDeserializer");
    }
}
