// An EventSource that keeps itself connected: the browser reconnects on its own with the
// Last-Event-ID header; when it gives up (the service answered an error, or was down long
// enough), this opens a new one after a pause, resuming from the last id it saw.

import { streamUrl } from './api.js';

export const EVENT_NAMES = ['queued', 'running', 'progress', 'succeeded', 'failed', 'cancelled'];

export class LiveStream {
  /**
   * @param path the stream's API path
   * @param onEvent called with (name, data, id) for every event, `gap` included
   * @param onState called with 'connecting', 'live' or 'down'
   * @param isFinished when true, the server's closing of the stream is its end, not a drop
   */
  constructor(path, { onEvent, onState = () => {}, isFinished = () => false }) {
    this.path = path;
    this.onEvent = onEvent;
    this.onState = onState;
    this.isFinished = isFinished;
    this.lastId = null;
    this.retryMs = 1000;
    this.source = null;
    this.timer = null;
    this.closed = false;
  }

  open() {
    this.closed = false;
    this.onState('connecting');
    const source = new EventSource(streamUrl(this.path, this.lastId));
    this.source = source;
    source.onopen = () => {
      this.retryMs = 1000;
      this.onState('live');
    };
    source.onerror = () => {
      if (this.closed || this.isFinished()) {
        source.close();
        return;
      }
      this.onState('down');
      if (source.readyState === EventSource.CLOSED) {
        this.timer = setTimeout(() => this.open(), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 15000);
      }
    };
    for (const name of [...EVENT_NAMES, 'gap']) {
      source.addEventListener(name, message => {
        if (message.lastEventId) {
          this.lastId = message.lastEventId;
        }
        this.onEvent(name, JSON.parse(message.data), message.lastEventId);
      });
    }
    return this;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.source) {
      this.source.close();
    }
  }
}
