// The dashboard: queues, live events, tasks, schedules, one task's life, an enqueue form. It uses only the
// public API and its event streams, and writes text with textContent, never as HTML.

import { call, setToken, token, Unauthorized } from './api.js';
import { LiveStream } from './stream.js';

const $ = selector => document.querySelector(selector);
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const FEED_KEEP = 200;
const BUCKET_MS = 5000;
const BUCKETS = 12; // one minute

const state = {
  view: null,
  queuesTimer: null,
  throughput: new Map(), // queue -> Map(bucket -> finished tasks)
  feed: null,
  task: null, // { id, stream }
  tasksNext: null,
  tasksSchedule: null, // the schedule whose tasks the list shows, from #/tasks?schedule=
  scopes: new Set(), // what the token may do: read, enqueue, work, admin
};

/** Whether the token has the scope; what it lacks is not offered at all. */
function can(scope) {
  return state.scopes.has(scope);
}

// ---- small helpers

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') {
      node.className = value;
    } else if (key === 'text') {
      node.textContent = value;
    } else if (key.startsWith('data-') || key.startsWith('aria-')) {
      node.setAttribute(key, value);
    } else {
      node[key] = value;
    }
  }
  children.forEach(child => node.append(child));
  return node;
}

function badge(text, kind = text) {
  return el('span', { class: `badge ${kind}`, text });
}

function age(seconds) {
  if (seconds === null || seconds === undefined) {
    return '–';
  }
  const s = Math.round(seconds);
  if (s < 60) {
    return `${s}s`;
  }
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

function time(iso) {
  return iso ? new Date(iso).toLocaleString() : '–';
}

function json(value) {
  return value === null || value === undefined ? '–' : JSON.stringify(value, null, 2);
}

/** Runs an API call; asks for the token again when it is refused, shows problems in `errorTarget`. */
async function guarded(action, errorTarget) {
  try {
    if (errorTarget) {
      errorTarget.textContent = '';
    }
    return await action();
  } catch (error) {
    if (error instanceof Unauthorized) {
      askForToken('That token was not accepted.');
    } else if (errorTarget) {
      errorTarget.textContent = error.message;
    } else {
      console.warn(error);
    }
    return undefined;
  }
}

// ---- token

function askForToken(message = '') {
  const dialog = $('#token-dialog');
  $('#token-error').textContent = message;
  $('#token-input').value = '';
  if (!dialog.open) {
    dialog.showModal();
  }
  $('#token-input').focus();
}

async function acceptToken(event) {
  event.preventDefault();
  const candidate = $('#token-input').value.trim();
  if (!candidate) {
    return;
  }
  setToken(candidate);
  try {
    await loadScopes();
  } catch (error) {
    setToken(null);
    $('#token-error').textContent = error instanceof Unauthorized ? 'That token was not accepted.' : error.message;
    return;
  }
  $('#token-dialog').close();
  start();
}

// ---- connection state, shared by the live feed

function showConnection(connectionState) {
  const badgeNode = $('#connection');
  badgeNode.dataset.state = connectionState;
  badgeNode.textContent = { connecting: 'connecting…', live: 'live', down: 'disconnected' }[connectionState];
  $('#disconnected').hidden = connectionState !== 'down';
}

// ---- the live feed of all events (feeds the events view and the throughput charts)

function startFeed() {
  if (state.feed) {
    return;
  }
  state.feed = new LiveStream('/events', {
    onState: showConnection,
    onEvent: (name, data, id) => {
      if (TERMINAL.has(name)) {
        countFinished(data.queue);
      }
      addFeedLine(name, data, id);
    },
  }).open();
}

function countFinished(queue) {
  const bucket = Math.floor(Date.now() / BUCKET_MS);
  const counts = state.throughput.get(queue) || new Map();
  counts.set(bucket, (counts.get(bucket) || 0) + 1);
  for (const key of counts.keys()) {
    if (key <= bucket - BUCKETS) {
      counts.delete(key);
    }
  }
  state.throughput.set(queue, counts);
}

function describe(name, data) {
  switch (name) {
    case 'progress': return `task ${data.taskId} ${data.percent ?? ''}% ${data.message ?? ''}`;
    case 'failed': return `task ${data.taskId}: ${data.error ?? ''}`;
    case 'queued': return `task ${data.taskId} (${data.type})${data.error ? ' after: ' + data.error : ''}`;
    case 'gap': return `events up to ${data.prunedThrough} were pruned by retention`;
    default: return `task ${data.taskId} (${data.type})`;
  }
}

function eventLine(name, data, id) {
  const link = data.taskId ? el('a', { href: `#/task/${data.taskId}`, text: describe(name, data) })
      : el('span', { text: describe(name, data) });
  return el('li', { 'data-event-id': id || '' },
      el('span', { text: id ? `#${id}` : '' }),
      badge(name, name === 'progress' ? 'running' : name),
      el('span', { class: 'what' }, data.queue ? `${data.queue} · ` : '', link));
}

function addFeedLine(name, data, id) {
  const feed = $('#feed');
  feed.prepend(eventLine(name, data, id));
  while (feed.children.length > FEED_KEEP) {
    feed.lastElementChild.remove();
  }
}

// ---- queues

function sparkline(queue) {
  const counts = state.throughput.get(queue) || new Map();
  const now = Math.floor(Date.now() / BUCKET_MS);
  const values = [];
  for (let b = now - BUCKETS + 1; b <= now; b++) {
    values.push(counts.get(b) || 0);
  }
  const max = Math.max(1, ...values);
  const total = values.reduce((a, b) => a + b, 0);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', '120');
  svg.setAttribute('height', '24');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${total} finished in the last minute`);
  values.forEach((value, i) => {
    const h = Math.round((value / max) * 22);
    const rect = document.createElementNS(ns, 'rect');
    rect.setAttribute('x', String(i * 10));
    rect.setAttribute('y', String(24 - Math.max(h, 1)));
    rect.setAttribute('width', '8');
    rect.setAttribute('height', String(Math.max(h, 1)));
    rect.setAttribute('fill', value ? '#2457c5' : '#dfe3e6');
    svg.append(rect);
  });
  const title = document.createElementNS(ns, 'title');
  title.textContent = `${total} finished in the last minute`;
  svg.append(title);
  return svg;
}

/** A queue's limits in a few words, and the due tasks they hold back now. */
function flowSummary(queue) {
  const limits = queue.limits || {};
  const parts = [];
  if (limits.maxRunning !== null && limits.maxRunning !== undefined) {
    parts.push(`max ${limits.maxRunning}`);
  }
  if (limits.maxRunningPerKey !== null && limits.maxRunningPerKey !== undefined) {
    parts.push(`${limits.maxRunningPerKey} per key`);
  }
  if (limits.rate) {
    parts.push(`${limits.rate.count}/${limits.rate.periodSeconds}s`);
  }
  if (limits.ratePerKey) {
    parts.push(`${limits.ratePerKey.count}/${limits.ratePerKey.periodSeconds}s per key`);
  }
  if (limits.fairness === 'round-robin') {
    parts.push('round-robin');
  }
  const cell = el('td', { class: 'flow', 'data-flow': queue.name }, el('span', { text: parts.length ? parts.join(' · ') : '–' }));
  const held = queue.heldBack || {};
  const reasons = [['maxRunning', 'max running'], ['maxRunningPerKey', 'per key'], ['rate', 'rate']]
      .filter(([field]) => held[field] > 0);
  for (const [field, label] of reasons) {
    cell.append(' ', badge(`${held[field]} held: ${label}`, 'held'));
  }
  const edit = el('button', {
    type: 'button', class: 'small', text: 'Edit', 'data-edit-limits': queue.name,
    'aria-label': `Edit flow control of queue ${queue.name}`,
  });
  edit.addEventListener('click', () => openLimits(queue));
  if (can('admin')) {
    cell.append(' ', edit);
  }
  return cell;
}

function setNumber(selector, value) {
  $(selector).value = value === null || value === undefined ? '' : String(value);
}

function readNumber(selector) {
  const text = $(selector).value.trim();
  return text === '' ? null : Number(text);
}

function readRate(countSelector, periodSelector) {
  const count = readNumber(countSelector);
  const period = readNumber(periodSelector);
  return count === null && period === null ? null : { count, periodSeconds: period };
}

function openLimits(queue) {
  const limits = queue.limits || {};
  $('#limits-queue').textContent = queue.name;
  $('#limits-form').dataset.queue = queue.name;
  setNumber('#limits-max-running', limits.maxRunning);
  setNumber('#limits-max-running-per-key', limits.maxRunningPerKey);
  setNumber('#limits-rate-count', limits.rate && limits.rate.count);
  setNumber('#limits-rate-period', limits.rate && limits.rate.periodSeconds);
  setNumber('#limits-rate-per-key-count', limits.ratePerKey && limits.ratePerKey.count);
  setNumber('#limits-rate-per-key-period', limits.ratePerKey && limits.ratePerKey.periodSeconds);
  $('#limits-fairness').value = limits.fairness || 'fifo';
  $('#limits-error').textContent = '';
  $('#limits-dialog').showModal();
}

async function saveLimits(event) {
  event.preventDefault();
  const queue = $('#limits-form').dataset.queue;
  const patch = {
    maxRunning: readNumber('#limits-max-running'),
    maxRunningPerKey: readNumber('#limits-max-running-per-key'),
    rate: readRate('#limits-rate-count', '#limits-rate-period'),
    ratePerKey: readRate('#limits-rate-per-key-count', '#limits-rate-per-key-period'),
    fairness: $('#limits-fairness').value,
  };
  const updated = await guarded(() => call('PATCH', `/queues/${encodeURIComponent(queue)}`, patch), $('#limits-error'));
  if (updated) {
    $('#limits-dialog').close();
    replaceQueueRow(updated);
  }
}

function queueRow(queue) {
  const action = queue.paused ? 'resume' : 'pause';
  const button = el('button', {
    type: 'button', text: queue.paused ? 'Resume' : 'Pause', 'data-queue': queue.name,
    'aria-label': `${queue.paused ? 'Resume' : 'Pause'} queue ${queue.name}`,
  });
  button.hidden = !can('admin');
  button.addEventListener('click', async () => {
    button.disabled = true;
    const updated = await guarded(() => call('POST', `/queues/${encodeURIComponent(queue.name)}/${action}`));
    if (updated) {
      replaceQueueRow(updated);
    } else {
      button.disabled = false;
    }
  });
  const cells = [];
  if (queue.failed > 0 && can('admin')) {
    const redrive = el('button', {
      type: 'button', class: 'small', text: 'Retry failed', 'data-retry-failed': queue.name,
      'aria-label': `Retry the failed tasks of queue ${queue.name}`,
    });
    redrive.addEventListener('click', async () => {
      redrive.disabled = true;
      const result = await guarded(() => call('POST', '/tasks/retry', { queue: queue.name, state: 'failed' }));
      redrive.textContent = result ? `${result.count} retried` : 'Retry failed';
      redrive.disabled = false;
    });
    cells.push(' ', redrive);
  }
  return el('tr', { 'data-queue': queue.name },
      el('th', { scope: 'row' }, el('a', { href: `#/tasks?queue=${encodeURIComponent(queue.name)}`, text: queue.name })),
      el('td', { class: 'num', text: queue.queued }),
      el('td', { class: 'num', text: queue.running }),
      el('td', { class: 'num', text: queue.succeeded }),
      el('td', { class: 'num' }, String(queue.failed), ...cells),
      el('td', { class: 'num', text: queue.cancelled }),
      el('td', { class: 'num', text: age(queue.oldestQueuedAgeSeconds) }),
      el('td', { class: 'chart' }, sparkline(queue.name)),
      flowSummary(queue),
      el('td', {}, badge(queue.paused ? 'paused' : 'active', queue.paused ? 'paused' : 'active'), ' ', button));
}

function replaceQueueRow(queue) {
  const old = document.querySelector(`#queues-table tr[data-queue="${CSS.escape(queue.name)}"]`);
  const row = queueRow(queue);
  if (old) {
    const focused = old.contains(document.activeElement);
    old.replaceWith(row);
    if (focused) {
      row.querySelector('button[data-queue]').focus();
    }
  } else {
    $('#queues-table tbody').append(row);
  }
}

async function refreshQueues() {
  const body = await guarded(() => call('GET', '/queues'));
  if (!body) {
    return;
  }
  const names = new Set(body.queues.map(q => q.name));
  for (const row of document.querySelectorAll('#queues-table tbody tr')) {
    if (!names.has(row.dataset.queue)) {
      row.remove();
    }
  }
  body.queues.forEach(replaceQueueRow);
}

// ---- tasks

function taskRow(task) {
  return el('tr', {},
      el('td', { class: 'num' }, el('a', { href: `#/task/${task.id}`, text: String(task.id) })),
      el('td', { text: task.queue }),
      el('td', { text: task.type }),
      el('td', {}, badge(task.state)),
      el('td', { class: 'num', text: `${task.attempt}/${task.maxAttempts}` }),
      el('td', { text: time(task.createdAt) }));
}

async function loadTasks(append) {
  const params = new URLSearchParams({ limit: '50' });
  const queue = $('#filter-queue').value.trim();
  const taskState = $('#filter-state').value;
  if (queue) {
    params.set('queue', queue);
  }
  if (state.tasksSchedule) {
    params.set('schedule', state.tasksSchedule);
  }
  if (taskState) {
    params.set('state', taskState);
  }
  if (append && state.tasksNext) {
    params.set('before', state.tasksNext);
  }
  const page = await guarded(() => call('GET', `/tasks?${params}`), $('#tasks-error'));
  if (!page) {
    return;
  }
  const body = $('#tasks-table tbody');
  if (!append) {
    body.replaceChildren();
  }
  page.tasks.forEach(task => body.append(taskRow(task)));
  state.tasksNext = page.next;
  $('#tasks-more').hidden = !page.next;
}

// ---- schedules

function scheduleRow(schedule) {
  const path = `/schedules/${encodeURIComponent(schedule.name)}`;
  const toggle = el('button', {
    type: 'button', text: schedule.paused ? 'Resume' : 'Pause', 'data-schedule-toggle': schedule.name,
    'aria-label': `${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`,
  });
  toggle.hidden = !can('admin');
  toggle.addEventListener('click', async () => {
    toggle.disabled = true;
    const updated = await guarded(() => call('POST', `${path}/${schedule.paused ? 'resume' : 'pause'}`),
        $('#schedules-error'));
    if (updated) {
      replaceScheduleRow(updated);
    } else {
      toggle.disabled = false;
    }
  });
  const trigger = el('button', {
    type: 'button', class: 'small', text: 'Trigger', 'data-schedule-trigger': schedule.name,
    'aria-label': `Make a task of schedule ${schedule.name} now`,
  });
  trigger.hidden = !can('enqueue');
  trigger.addEventListener('click', async () => {
    trigger.disabled = true;
    const task = await guarded(() => call('POST', `${path}/trigger`), $('#schedules-error'));
    trigger.disabled = false;
    if (task) {
      location.hash = `#/task/${task.id}`;
    }
  });
  const last = schedule.lastFire;
  const lastCell = !last ? el('td', { text: '–' }) : el('td', {}, time(last.at), ' ',
      last.taskId ? el('a', { href: `#/task/${last.taskId}`, text: `task ${last.taskId}` }) : badge(last.outcome, 'paused'));
  const runs = el('ol', { class: 'runs' }, ...schedule.nextRuns.map(run => el('li', { text: time(run) })));
  return el('tr', { 'data-schedule': schedule.name },
      el('th', { scope: 'row' }, el('a', {
        href: `#/tasks?schedule=${encodeURIComponent(schedule.name)}`, text: schedule.name,
        title: 'Its tasks',
      })),
      el('td', {}, el('code', { text: schedule.cron }), el('br'), schedule.timezone),
      el('td', { text: `${schedule.task.type} on ${schedule.queue}` + (schedule.overlap === 'skip' ? ', no overlap' : '')
          + (schedule.catchUp === 'none' ? '' : `, catch-up ${schedule.catchUp}`) }),
      el('td', {}, runs),
      lastCell,
      el('td', {}, badge(schedule.paused ? 'paused' : 'active'), ' ', toggle, ' ', trigger));
}

function replaceScheduleRow(schedule) {
  const old = document.querySelector(`#schedules-table tr[data-schedule="${CSS.escape(schedule.name)}"]`);
  const row = scheduleRow(schedule);
  if (old) {
    old.replaceWith(row);
  } else {
    $('#schedules-table tbody').append(row);
  }
}

async function loadSchedules() {
  const body = await guarded(() => call('GET', '/schedules'), $('#schedules-error'));
  if (!body) {
    return;
  }
  $('#schedules-table tbody').replaceChildren(...body.schedules.map(scheduleRow));
  $('#schedules-empty').hidden = body.schedules.length > 0;
}

// ---- one task

function showProgress(percent, message) {
  const value = Math.max(0, Math.min(100, Math.round(percent ?? 0)));
  $('#task-progress').setAttribute('aria-valuenow', String(value));
  $('#task-progress .progress-fill').style.width = `${value}%`;
  $('#task-progress-text').textContent = `${value} %`;
  if (message !== undefined) {
    $('#task-message').textContent = message ?? '';
  }
}

function showTask(task) {
  $('#task-title').textContent = `Task ${task.id}`;
  const stateBadge = $('#task-state');
  stateBadge.className = `badge ${task.state}`;
  stateBadge.textContent = task.state;
  if (task.state === 'succeeded') {
    showProgress(100);
  } else if (task.progress && task.progress.percent !== null) {
    showProgress(task.progress.percent, task.progress.message);
  }
  const fields = [
    ['Queue', task.queue], ['Type', task.type], ['Priority', task.priority],
    ['Attempt', `${task.attempt} of ${task.maxAttempts}`], ['Run at', time(task.runAt)],
    ['Created', time(task.createdAt)], ['Started', time(task.startedAt)], ['Finished', time(task.finishedAt)],
    ['Worker', task.workerId ?? '–'], ['Lease until', time(task.leaseExpiresAt)],
    ['Idempotency key', task.idempotencyKey ?? '–'],
  ];
  if (task.schedule) {
    fields.push(['Schedule', task.schedule], ['Scheduled for', time(task.scheduledFor)]);
  }
  if (task.concurrencyKey) {
    fields.push(['Concurrency key', task.concurrencyKey]);
  }
  if (task.snoozes > 0) {
    fields.push(['Snoozes', `${task.snoozes} of ${task.maxSnoozes}`]);
  }
  if (task.uniqueKey) {
    fields.push(['Unique key', task.uniqueKey]);
  }
  $('#task-fields').replaceChildren(...fields.map(([name, value]) =>
      el('div', {}, el('dt', { text: name }), el('dd', { text: String(value) }))));
  $('#task-payload').textContent = json(task.payload);
  $('#task-result').textContent = json(task.result);
  $('#task-error').textContent = task.lastError ?? '–';
  $('#task-cancel').disabled = TERMINAL.has(task.state);
  $('#task-retry').disabled = !(task.state === 'failed' || task.state === 'cancelled');
}

async function openTask(id) {
  closeTask();
  $('#task-events').replaceChildren();
  $('#task-message').textContent = '';
  showProgress(0);
  const task = await guarded(() => call('GET', `/tasks/${id}`), $('#task-message'));
  if (!task) {
    return;
  }
  showTask(task);
  let finished = false;
  const stream = new LiveStream(`/tasks/${id}/events`, {
    isFinished: () => finished,
    onEvent: async (name, data, eventId) => {
      $('#task-events').append(eventLine(name, data, eventId));
      if (name === 'progress') {
        showProgress(data.percent, data.message);
      }
      if (name === 'queued' || name === 'running') {
        showProgress(0, name === 'queued' && data.error ? `queued again: ${data.error}` : '');
      }
      const stateBadge = $('#task-state');
      stateBadge.className = `badge ${data.state}`;
      stateBadge.textContent = data.state;
      if (TERMINAL.has(name)) {
        finished = true;
        const latest = await guarded(() => call('GET', `/tasks/${id}`));
        if (latest && state.task && state.task.id === id) {
          showTask(latest);
        }
      } else {
        finished = false;
      }
    },
  }).open();
  state.task = { id, stream };
}

function closeTask() {
  if (state.task) {
    state.task.stream.close();
    state.task = null;
  }
}

async function taskAction(action) {
  if (!state.task) {
    return;
  }
  const id = state.task.id;
  const task = await guarded(() => call('POST', `/tasks/${id}/${action}`), $('#task-message'));
  if (task) {
    if (action === 'retry') {
      openTask(id); // its stream ended with the terminal event; a retried task has a new life
    } else {
      showTask(task);
    }
  }
}

// ---- enqueue

async function enqueue(event) {
  event.preventDefault();
  const error = $('#enqueue-error');
  error.textContent = '';
  const request = { type: $('#enqueue-type').value.trim() };
  const payloadText = $('#enqueue-payload').value.trim();
  if (payloadText) {
    try {
      request.payload = JSON.parse(payloadText);
    } catch (e) {
      error.textContent = `Payload is not JSON: ${e.message}`;
      return;
    }
  }
  const priority = Number($('#enqueue-priority').value || 0);
  if (priority) {
    request.priority = priority;
  }
  const delay = Number($('#enqueue-delay').value || 0);
  if (delay) {
    request.delaySeconds = delay;
  }
  const queue = $('#enqueue-queue').value.trim();
  const task = await guarded(() => call('POST', `/queues/${encodeURIComponent(queue)}/tasks`, request), error);
  if (task) {
    location.hash = `#/task/${task.id}`;
  }
}

// ---- views

function route() {
  const hash = location.hash || '#/queues';
  const [path, query] = hash.slice(1).split('?');
  const parts = path.split('/').filter(Boolean);
  const view = parts[0] === 'task' && parts[1] ? 'task' : (parts[0] || 'queues');
  document.querySelectorAll('.view').forEach(section => { section.hidden = section.id !== `view-${view}`; });
  document.querySelectorAll('.top nav a').forEach(link => {
    if (link.dataset.view === view || (view === 'task' && link.dataset.view === 'tasks')) {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  });
  clearInterval(state.queuesTimer);
  if (view !== 'task') {
    closeTask();
  }
  state.view = view;
  if (!token()) {
    return;
  }
  if (view === 'queues') {
    refreshQueues();
    state.queuesTimer = setInterval(refreshQueues, 3000);
  } else if (view === 'tasks') {
    const params = new URLSearchParams(query || '');
    if (params.has('queue')) {
      $('#filter-queue').value = params.get('queue');
    }
    state.tasksSchedule = params.get('schedule');
    $('#tasks-title').textContent = state.tasksSchedule ? `Tasks of schedule ${state.tasksSchedule}` : 'Tasks';
    loadTasks(false);
  } else if (view === 'schedules') {
    loadSchedules();
  } else if (view === 'task') {
    openTask(parts[1]);
  }
}

async function loadScopes() {
  state.scopes = new Set((await call('GET', '/token')).scopes);
  showScopes();
}

/** Hides what the token cannot do, and says so when it cannot even read. */
function showScopes() {
  document.querySelector("nav a[data-view='enqueue']").hidden = !can('enqueue');
  $('#task-cancel').hidden = !can('admin');
  $('#task-retry').hidden = !can('admin');
  const notice = $('#scope-notice');
  notice.hidden = can('read');
  notice.textContent = can('read') ? '' : `This token's scopes (${[...state.scopes].join(', ') || 'none'}) do not`
      + ' include read, which every view of the dashboard needs.';
}

async function start() {
  if (state.scopes.size === 0 && !(await guarded(loadScopes))) {
    return;
  }
  if (can('read')) {
    startFeed();
  }
  route();
}

function init() {
  $('#token-form').addEventListener('submit', acceptToken);
  $('#token-dialog').addEventListener('cancel', event => event.preventDefault()); // a token is needed
  $('#sign-out').addEventListener('click', () => {
    setToken(null);
    state.scopes = new Set();
    if (state.feed) {
      state.feed.close();
      state.feed = null;
    }
    askForToken();
  });
  $('#task-filter').addEventListener('submit', event => {
    event.preventDefault();
    loadTasks(false);
  });
  $('#tasks-more').addEventListener('click', () => loadTasks(true));
  $('#task-cancel').addEventListener('click', () => taskAction('cancel'));
  $('#task-retry').addEventListener('click', () => taskAction('retry'));
  $('#enqueue-form').addEventListener('submit', enqueue);
  $('#limits-form').addEventListener('submit', saveLimits);
  $('#limits-cancel').addEventListener('click', () => $('#limits-dialog').close());
  window.addEventListener('hashchange', route);
  if (token()) {
    start();
  } else {
    route();
    askForToken();
  }
}

init();
