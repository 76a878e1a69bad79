// The public API, with the token kept for this browser session.

const TOKEN_KEY = 'tasklane.token';

export class Unauthorized extends Error {}

/** A problem answer (RFC 9457) as an error whose message says what went wrong. */
export class Problem extends Error {
  constructor(status, body) {
    const fields = (body && body.errors || []).map(e => `${e.field}: ${e.message}`);
    super([body && (body.detail || body.title) || `HTTP ${status}`, ...fields].join('\n'));
    this.status = status;
    this.body = body;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  } else {
    sessionStorage.removeItem(TOKEN_KEY);
  }
}

/** Calls the API; resolves to the JSON body (or null), rejects with Unauthorized or Problem. */
export async function call(method, path, body) {
  const headers = { 'Authorization': `Bearer ${token() || ''}` };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(`/api/v1${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    throw new Unauthorized();
  }
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new Problem(response.status, json);
  }
  return json;
}

/** A stream URL with the token as the parameter EventSource needs, and a cursor if given. */
export function streamUrl(path, lastEventId) {
  const url = new URL(`/api/v1${path}`, location.origin);
  url.searchParams.set('access_token', token() || '');
  if (lastEventId) {
    url.searchParams.set('lastEventId', lastEventId);
  }
  return url.toString();
}
