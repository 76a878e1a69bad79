package dev.tasklane.client.spring;

import java.time.Duration;

import dev.tasklane.client.TasklaneWorker;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the worker with the application context and stops it gracefully before the beans it
 * uses go away (Boot's graceful shutdown waits for the stop callback).
 */
public final class TasklaneWorkerLifecycle implements SmartLifecycle {

    private final TasklaneWorker worker;
    private final Duration shutdownGrace;
    private volatile boolean running;

    TasklaneWorkerLifecycle(TasklaneWorker worker, Duration shutdownGrace) {
        this.worker = worker;
        this.shutdownGrace = shutdownGrace;
    }

    public TasklaneWorker worker() {
        return worker;
    }

    @Override
    public void start() {
        worker.start();
        running = true;
    }

    @Override
    public void stop() {
        stop(() -> { });
    }

    @Override
    public void stop(Runnable callback) {
        running = false;
        worker.stop(shutdownGrace).doFinally(signal -> callback.run()).subscribe();
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
