package dev.tasklane.events;

/** What an event stream sends: an event of the log, or word that retention pruned some. */
public sealed interface StreamItem permits TaskEvent, Gap {
}
