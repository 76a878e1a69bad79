package dev.tasklane.client;

/** The filters of {@code GET /tasks}; null fields are not sent. */
public record TaskQuery(String queue, String state, String type, String concurrencyKey, String schedule,
                        Integer limit, String before) {

    public static TaskQuery all() {
        return new TaskQuery(null, null, null, null, null, null, null);
    }

    public static TaskQuery queue(String queue) {
        return all().withQueue(queue);
    }

    public TaskQuery withQueue(String value) {
        return new TaskQuery(value, state, type, concurrencyKey, schedule, limit, before);
    }

    public TaskQuery withState(String value) {
        return new TaskQuery(queue, value, type, concurrencyKey, schedule, limit, before);
    }

    public TaskQuery withType(String value) {
        return new TaskQuery(queue, state, value, concurrencyKey, schedule, limit, before);
    }

    public TaskQuery withConcurrencyKey(String value) {
        return new TaskQuery(queue, state, type, value, schedule, limit, before);
    }

    public TaskQuery withSchedule(String value) {
        return new TaskQuery(queue, state, type, concurrencyKey, value, limit, before);
    }

    public TaskQuery withLimit(int value) {
        return new TaskQuery(queue, state, type, concurrencyKey, schedule, value, before);
    }

    public TaskQuery before(String cursor) {
        return new TaskQuery(queue, state, type, concurrencyKey, schedule, limit, cursor);
    }
}
