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
        // Cancelling a periodic timer (Flux.interval) removes it from its scheduler's queue under
        // that queue's lock. Reactor allows this for its one-shot tasks but not the periodic ones.
        builder.allowBlockingCallsInside("reactor.core.scheduler.PeriodicWorkerTask", "dispose");
        builder.allowBlockingCallsInside("reactor.core.scheduler.InstantPeriodicWorkerTask", "dispose");
        builder.allowBlockingCallsInside("reactor.core.scheduler.PeriodicSchedulerTask", "dispose");
        // Netty 4.2's adaptive allocator takes a StampedLock when it grows or frees a magazine.
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "tryAllocate");
        // Static files (the dashboard, Swagger UI) are entries of the jar: WebFlux has no
        // non-blocking way to open or read a classpath resource. The reads are small and come
        // from the page cache; allowed here and nowhere else.
        builder.allowBlockingCallsInside("org.springframework.web.reactive.resource.PathResourceResolver", "getResource");
        // springdoc builds the OpenAPI document once, on the first request for it (behind a lock),
        // and scans the classpath for its annotations while it does; later requests get the cache.
        builder.allowBlockingCallsInside("org.springdoc.api.AbstractOpenApiResource", "getOpenApi");
    }
}
