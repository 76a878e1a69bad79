package dev.tasklane.support;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Work a replica does on a fixed interval for as long as it runs. Rounds never overlap: a slow
 * round makes the loop skip ticks rather than fail, and a failed round is logged and the loop
 * goes on with the next tick.
 */
public abstract class PeriodicJob extends LoopLifecycle {

    private final Logger log = LoggerFactory.getLogger(getClass());
    private final String name;
    private final Duration firstDelay;
    private final Duration interval;

    /** A job whose first round runs one interval after start. */
    protected PeriodicJob(String name, Duration interval) {
        this(name, interval, interval);
    }

    protected PeriodicJob(String name, Duration firstDelay, Duration interval) {
        this.name = name;
        this.firstDelay = firstDelay;
        this.interval = interval;
    }

    /** One round of the work. */
    protected abstract Mono<?> runOnce();

    @Override
    protected Disposable startLoop() {
        return Flux.interval(firstDelay, interval)
                .onBackpressureDrop()
                // deferred, so that a round that throws before it returns its Mono fails that round alone
                .concatMap(tick -> Mono.defer(this::runOnce)
                        .onErrorResume(e -> {
                            log.warn("{} failed: {}", name, e.toString());
                            return Mono.empty();
                        }), 1)
                .subscribe();
    }
}
