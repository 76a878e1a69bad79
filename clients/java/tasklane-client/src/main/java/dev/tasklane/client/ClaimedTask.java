package dev.tasklane.client;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A task a {@link TasklaneWorker} holds the lease of, as its handler sees it. */
public final class ClaimedTask {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Task task;
    private final TasklaneClient client;

    ClaimedTask(Task task, TasklaneClient client) {
        this.task = task;
        this.client = client;
    }

    public Task task() {
        return task;
    }

    public long id() {
        return task.id();
    }

    public String type() {
        return task.type();
    }

    public int attempt() {
        return task.attempt();
    }

    /** The payload as given at enqueue (a JSON null when there was none). */
    public JsonNode payload() {
        return task.payload() == null ? JSON.nullNode() : task.payload();
    }

    /** The payload read as {@code type} (a record, a Map, ...). */
    public <T> T payload(Class<T> type) {
        return JSON.treeToValue(payload(), type);
    }

    /** Reports progress (shown in the task and sent as a {@code progress} event). */
    public Mono<Task> progress(Integer percent, String message) {
        return client.progress(task, percent, message);
    }
}
