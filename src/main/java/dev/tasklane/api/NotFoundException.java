package dev.tasklane.api;

/** Something the request names does not exist: a 404 with this title and detail. */
final class NotFoundException extends RuntimeException {

    private final String title;

    NotFoundException(String title, String detail) {
        super(detail, null, false, false);
        this.title = title;
    }

    String title() {
        return title;
    }
}
