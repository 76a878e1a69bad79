package dev.tasklane.support;

import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;

/**
 * A component whose work is one long-running subscription, started and stopped with the
 * application context (which may also stop and start it again, as the test context cache does).
 */
public abstract class LoopLifecycle implements SmartLifecycle {

    private volatile Disposable loop;

    /** Subscribes the work; called on every start. */
    protected abstract Disposable startLoop();

    @Override
    public void start() {
        loop = startLoop();
    }

    @Override
    public void stop() {
        Disposable running = loop;
        if (running != null) {
            running.dispose();
        }
        loop = null;
    }

    @Override
    public boolean isRunning() {
        return loop != null;
    }
}
