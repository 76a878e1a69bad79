-- What retention has pruned from the event log. A stream resumed from a cursor below this id may
-- have missed events that are gone; it says so with a `gap` event instead of skipping silently.
-- One row, written only by retention.
CREATE TABLE event_retention (
    only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    pruned_through bigint  NOT NULL DEFAULT 0
);

INSERT INTO event_retention DEFAULT VALUES;
