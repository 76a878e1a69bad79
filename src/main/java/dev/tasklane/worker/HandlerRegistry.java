package dev.tasklane.worker;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/** Every {@link TaskHandler} bean by its type; two handlers for one type stop the replica. */
@Component
public final class HandlerRegistry {

    private final Map<String, TaskHandler> byType;

    HandlerRegistry(List<TaskHandler> handlers) {
        Map<String, TaskHandler> map = new HashMap<>();
        for (TaskHandler handler : handlers) {
            TaskHandler previous = map.putIfAbsent(handler.type(), handler);
            if (previous != null) {
                throw new IllegalStateException("Two handlers for task type '" + handler.type() + "': "
                        + previous.getClass().getName() + " and " + handler.getClass().getName());
            }
        }
        this.byType = Map.copyOf(map);
    }

    public Optional<TaskHandler> handler(String type) {
        return Optional.ofNullable(byType.get(type));
    }

    public Set<String> types() {
        return byType.keySet();
    }

    /** What the handler of {@code type} finds wrong with a payload; nothing for unknown types. */
    public List<String> validate(String type, JsonNode payload) {
        TaskHandler handler = byType.get(type);
        return handler == null ? List.of() : handler.validate(payload);
    }
}
