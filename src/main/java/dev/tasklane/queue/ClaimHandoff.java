package dev.tasklane.queue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import dev.tasklane.support.StorableText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The one way tasks are claimed: every claim is delivered to whoever asked, or released.
 *
 * <p>A claim statement cancelled half-way is not undone: PostgreSQL may already have updated its
 * rows, and they would stay {@code running} under a lease nobody holds until it expired (and then
 * count an attempt that never ran). So the statement runs to its end here, owned by this class
 * and not by the caller's subscription. If the caller is still waiting it gets the tasks; if it
 * stopped waiting meanwhile (a long poll's deadline, a client that hung up, a pipeline that was
 * stopped) the tasks go straight back to {@code queued}, attempt not counted, with a
 * {@code queued} event whose error says why. A claim that fails may still have committed before
 * its answer was lost, so it is released too, by the lease id drawn before it was sent.
 */
@Component
public final class ClaimHandoff {

    private static final Logger log = LoggerFactory.getLogger(ClaimHandoff.class);
    private static final Object DELIVERED = new Object();
    private static final int RELEASE_ATTEMPTS = 6;

    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * Claims with {@code store} (the main pool's or the workers'). The returned mono may be
     * cancelled at any time; {@code whyAbandoned} is asked, at that moment, for the error the
     * released tasks' events carry ({@code released: ...}).
     */
    public Mono<List<Task>> claim(TaskStore store, Claim claim, Supplier<String> whyAbandoned) {
        return Mono.create(sink -> {
            UUID leaseId = newLeaseId();
            // null while pending; then DELIVERED, or the reason the caller stopped waiting
            AtomicReference<Object> settled = new AtomicReference<>();
            sink.onCancel(() -> settled.compareAndSet(null, whyAbandoned.get()));
            inFlight.incrementAndGet();
            store.claim(claim, leaseId).collectList()
                    .flatMap(tasks -> {
                        if (settled.compareAndSet(null, DELIVERED)) {
                            sink.success(tasks);
                            return Mono.<Void>empty();
                        }
                        return tasks.isEmpty() ? Mono.<Void>empty()
                                : release(store, claim.queue(), leaseId, (String) settled.get());
                    })
                    .onErrorResume(failure -> {
                        if (settled.compareAndSet(null, DELIVERED)) {
                            sink.error(failure);
                        }
                        return release(store, claim.queue(), leaseId, "released: the claim failed ("
                                + StorableText.sanitize(String.valueOf(failure.getMessage()), 200) + ")");
                    })
                    .doFinally(signal -> inFlight.decrementAndGet())
                    .subscribe();
        });
    }

    /**
     * Puts back to queued whatever the claim {@code leaseId} still holds, trying again for a while
     * when the database does not answer; past that, the leases expire and the rescuer takes them.
     */
    public Mono<Void> release(TaskStore store, String queue, UUID leaseId, String reason) {
        return Mono.defer(() -> store.releaseClaim(queue, leaseId, reason).count())
                .retryWhen(Retry.backoff(RELEASE_ATTEMPTS, Duration.ofMillis(200)).maxBackoff(Duration.ofSeconds(5)))
                .doOnNext(released -> {
                    if (released > 0) {
                        log.info("Released {} tasks of queue {} to queued: {}", released, queue, reason);
                    }
                })
                .onErrorResume(failure -> {
                    log.warn("Could not release the claim {} on queue {}; its leases will expire: {}", leaseId, queue,
                            failure.toString());
                    return Mono.empty();
                })
                .then();
    }

    /**
     * A random (version 4) UUID. Not from {@link UUID#randomUUID()}, whose SecureRandom reads
     * {@code /dev/urandom} on the calling thread, an event loop here: a lease id fences one claim
     * from the next and is checked together with the worker id, it is not a secret.
     */
    static UUID newLeaseId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long high = (random.nextLong() & ~0xF000L) | 0x4000L;
        long low = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(high, low);
    }

    /** Claim statements (and the releases that follow them) not yet ended: a drain waits for none. */
    public int inFlight() {
        return inFlight.get();
    }
}
