package dev.tasklane.api;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;

import dev.tasklane.queue.NewTask;

/** Reads the {@code unique} and {@code debounce} objects of an enqueue. */
final class UniqueRules {

    static final long MAX_SECONDS = 31_536_000;

    private UniqueRules() {
    }

    /** The {@code unique} object, or null when a field of it is invalid (recorded). */
    static NewTask.Unique unique(JsonFields fields) {
        int before = fields.errorCount();
        String key = fields.text("key", EnqueueRequests.MAX_KEY_LENGTH).orElse(null);
        Optional<NewTask.UniqueScope> scope = fields.requiredText("scope", 16).flatMap(name -> {
            Optional<NewTask.UniqueScope> known = Arrays.stream(NewTask.UniqueScope.values())
                    .filter(s -> s.wireName().equals(name)).findFirst();
            if (known.isEmpty()) {
                fields.invalid("scope", "must be waiting, active or window");
            }
            return known;
        });
        Optional<Long> window = fields.integer("windowSeconds", 1, MAX_SECONDS);
        if (scope.isPresent() && scope.get() == NewTask.UniqueScope.WINDOW && !fields.has("windowSeconds")) {
            fields.invalid("windowSeconds", "is required with scope window");
        }
        if (scope.isPresent() && scope.get() != NewTask.UniqueScope.WINDOW && fields.has("windowSeconds")) {
            fields.invalid("windowSeconds", "applies only to scope window");
        }
        if (fields.errorCount() > before || scope.isEmpty()) {
            return null;
        }
        return new NewTask.Unique(key, scope.get(), window.orElse(0L));
    }

    /** The {@code debounce} object, or null when a field of it is invalid (recorded). */
    static NewTask.Debounce debounce(JsonFields fields) {
        int before = fields.errorCount();
        Optional<String> key = fields.requiredText("key", EnqueueRequests.MAX_KEY_LENGTH);
        if (!fields.has("delaySeconds")) {
            fields.invalid("delaySeconds", "is required");
        }
        Optional<Long> delay = fields.integer("delaySeconds", 0, MAX_SECONDS);
        Optional<Long> maxDelay = fields.integer("maxDelaySeconds", 0, MAX_SECONDS);
        if (delay.isPresent() && maxDelay.isPresent() && maxDelay.get() < delay.get()) {
            fields.invalid("maxDelaySeconds", "must not be less than delaySeconds");
        }
        if (fields.errorCount() > before || key.isEmpty() || delay.isEmpty()) {
            return null;
        }
        return new NewTask.Debounce(key.get(), Duration.ofSeconds(delay.get()),
                maxDelay.map(Duration::ofSeconds).orElse(null));
    }
}
