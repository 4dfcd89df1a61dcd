/**
 * The lock board's page: static HTML, CSS and script, no build step and no third-party code.
 * Everything from Redis (keys, labels, host names) is put in the page with `textContent`,
 * never as HTML, and the Content-Security-Policy allows only this board's own script and style.
 */

import { UNSAFE_TEXT } from '../core/keys/quote-key.js';

export const BOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/**
 * The page, with its links relative to `base` (`.` or `./<the page's last path segment>`,
 * escaped here): the page's own URL decides where they point, whatever path reached it.
 */
export function boardPage(base: string): string {
  const href = escapeHtml(base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Locks</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href}/board.css">
</head>
<body data-base="${href}">
<header>
  <h1>Locks</h1>
  <span id="status" role="status">loading…</span>
</header>
<main>
  <section>
    <table id="locks">
      <thead><tr><th>Key</th><th>Holder</th><th>Since</th><th>TTL left</th><th>Waiters</th><th>Fencing token</th><th></th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="empty" hidden>No lock is held under this prefix.</p>
    <p id="more" hidden>No lock in the part of Redis scanned for this page; more may exist further on: see the next page.</p>
    <nav><button id="first" type="button" hidden>First page</button> <button id="next" type="button" hidden>Next page</button></nav>
  </section>
  <section>
    <h2>Events of this process</h2>
    <ol id="feed"></ol>
  </section>
</main>
<script src="${href}/board.js"></script>
</body>
</html>
`;
}

export const BOARD_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { display: flex; gap: 1rem; align-items: baseline; padding: .75rem 1.5rem; background: #22303c; color: #fff; }
h1 { font-size: 1.25rem; margin: 0; }
h2 { font-size: 1rem; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.5rem; padding: 1rem 1.5rem; }
table { width: 100%; border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e5e5e5; vertical-align: top; }
td.key { font-family: ui-monospace, monospace; word-break: break-all; }
td .sub { color: #6e6e73; font-size: 12px; }
tr.semaphore td.key::after { content: ' (semaphore)'; color: #6e6e73; font-family: system-ui, sans-serif; }
td .permit + .permit { margin-top: .3rem; }
#status.error { color: #ffb4a8; }
#feed { list-style: none; padding: 0; margin: 0; font-family: ui-monospace, monospace; font-size: 12px; max-height: 70vh; overflow: auto; }
#feed li { padding: .2rem 0; border-bottom: 1px solid #eee; word-break: break-all; }
#feed .lost, #feed .force-released { color: #b3261e; }
#feed .acquired { color: #1b6e20; }
button.release { color: #b3261e; }
`;

export const BOARD_JS = `'use strict';
(() => {
  const base = document.body.dataset.base;
  const rows = document.querySelector('#locks tbody');
  const status = document.getElementById('status');
  const feed = document.getElementById('feed');
  const empty = document.getElementById('empty');
  const more = document.getElementById('more');
  // Keys are up to 1,024 characters: the cell shows the start, the title the whole key.
  const KEY_SHOWN = 200;
  // What would make a key or a label read otherwise (a right-to-left override turns
  // "payments:\\u202e24" into "payments:42"): shown escaped, as logs show it (quote-key.ts), and
  // the C0 controls, which logs escape as JSON (a newline in a cell reads as a space).
  const UNSAFE = new RegExp('[\\u0000-\\u001f]|\\\\\\\\|' + ${JSON.stringify(UNSAFE_TEXT)}, 'gu');
  const HOLDERS_SHOWN = 20;
  const nextButton = document.getElementById('next');
  const firstButton = document.getElementById('first');
  let cursor = '0';
  let nextCursor = '0';
  let allowForceRelease = false;
  let loading = false;
  // How a release by force went stays in the status line this long: the refreshes that follow it
  // (the one its own event starts, the one every second) would otherwise write over it at once.
  const ANSWER_SHOWN_MS = 5000;
  let answerUntil = 0;
  let reloadTimer;

  function shown(text) {
    return String(text).replace(UNSAFE, (char) => {
      // A backslash too, as logs write it: a key spelling \\u202e must not read as one holding U+202E.
      if (char === '\\\\') return '\\\\\\\\';
      let escaped = '';
      for (let i = 0; i < char.length; i++) escaped += '\\\\u' + char.charCodeAt(i).toString(16).padStart(4, '0');
      return escaped;
    });
  }

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = shown(text);
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }

  function sub(td, text) {
    const span = document.createElement('div');
    span.className = 'sub';
    span.textContent = shown(text);
    td.appendChild(span);
  }

  function shorten(text, length) {
    if (text.length <= length) return text;
    // Never through an emoji (a surrogate pair): its first half would show as an escape the key does not hold.
    const last = text.charCodeAt(length - 1);
    return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length) + '…';
  }

  function keyCell(row, key) {
    const td = cell(row, shorten(key, KEY_SHOWN), 'key');
    td.title = shown(key);
    return td;
  }

  function describeHolder(holder) {
    return (holder.instance ? holder.instance + ' · ' : '') + holder.host + ' · pid ' + holder.pid;
  }

  // -1 (or none left but keys without expiry): Redis' PTTL of a key that never frees on its own.
  function lease(ms) {
    return ms === -1 || ms === Infinity ? 'no expiry' : (ms / 1000).toFixed(1) + ' s';
  }

  function lockRow(lock) {
    const row = document.createElement('tr');
    keyCell(row, lock.key);
    const holder = lock.holder;
    // Held by readers: each is an acquisition of its own, none is "the" holder.
    const readers = typeof lock.readers === 'number' ? lock.readers : undefined;
    const who = cell(row, holder ? (holder.label || '(no label)') : readers !== undefined ? 'read lock' : 'unknown');
    if (holder) sub(who, describeHolder(holder));
    else if (readers !== undefined) sub(who, readers + (readers === 1 ? ' reader' : ' readers'));
    cell(row, holder ? new Date(holder.since).toLocaleTimeString() : '');
    cell(row, lock.ttlMs === undefined ? '' : lease(lock.ttlMs));
    cell(row, String(lock.waiters), 'waiters');
    cell(row, lock.fencingToken === undefined ? '' : String(lock.fencingToken));
    const actions = cell(row, '');
    // Only an acquisition the list names (holderId) can be released by force: a lock held by
    // readers never is (they renew their own keys and would never learn of it).
    if (allowForceRelease && lock.holderId) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'release';
      button.textContent = 'Release by force';
      // The acquisition shown: one that took the key after it is left alone.
      button.addEventListener('click', () => forceRelease(lock.key, lock.holderId));
      actions.appendChild(button);
    }
    return row;
  }

  function semaphoreRow(key, semaphore) {
    const row = document.createElement('tr');
    row.className = 'semaphore';
    const keyTd = keyCell(row, key);
    sub(keyTd, 'semaphore: ' + semaphore.used + (semaphore.limit === undefined ? ' permits used' : ' of ' + semaphore.limit + ' permits'));
    const who = cell(row, '');
    for (const permit of semaphore.holders.slice(0, HOLDERS_SHOWN)) {
      const line = document.createElement('div');
      line.className = 'permit';
      line.textContent = shown((permit.holder ? (permit.holder.label || '(no label)') : 'unknown') + ' · ' + permit.permits + (permit.permits === 1 ? ' permit' : ' permits'));
      if (permit.holder) sub(line, describeHolder(permit.holder));
      who.appendChild(line);
    }
    if (semaphore.holders.length > HOLDERS_SHOWN) sub(who, 'and ' + (semaphore.holders.length - HOLDERS_SHOWN) + ' more');
    const since = semaphore.holders.flatMap((permit) => (permit.holder ? [permit.holder.since] : []));
    cell(row, since.length > 0 ? new Date(Math.min(...since)).toLocaleTimeString() : '');
    // A permit without expiry (-1) counts as the longest: the soonest to end is shown.
    const ttls = semaphore.holders.map((permit) => (permit.ttlMs === -1 ? Infinity : permit.ttlMs));
    cell(row, ttls.length > 0 ? lease(Math.min(...ttls)) : '');
    cell(row, String(semaphore.waiters), 'waiters');
    cell(row, semaphore.holders.slice(0, HOLDERS_SHOWN).map((permit) => String(permit.fencingToken)).join(', '));
    cell(row, '');
    return row;
  }

  function render(page) {
    rows.replaceChildren();
    for (const lock of page.locks) {
      if (lock.held) rows.appendChild(lockRow(lock));
      if (lock.semaphore) rows.appendChild(semaphoreRow(lock.key, lock.semaphore));
    }
    // "Nothing is held" only once the scan has been through every key.
    empty.hidden = page.locks.length > 0 || !page.complete;
    more.hidden = page.locks.length > 0 || page.complete;
    nextButton.hidden = page.cursor === '0';
    firstButton.hidden = cursor === '0';
  }

  async function load() {
    if (loading) return;
    loading = true;
    try {
      const response = await fetch(base + '/api/locks?cursor=' + encodeURIComponent(cursor), { headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error('HTTP ' + response.status);
      const page = await response.json();
      allowForceRelease = page.allowForceRelease === true;
      nextCursor = page.cursor;
      render(page);
      if (Date.now() >= answerUntil) {
        status.textContent = 'updated ' + new Date().toLocaleTimeString();
        status.className = '';
      }
    } catch (error) {
      status.textContent = 'cannot load the locks: ' + error.message;
      status.className = 'error';
    } finally {
      loading = false;
    }
  }

  async function forceRelease(key, holder) {
    if (!window.confirm('Release the lock "' + shown(shorten(key, KEY_SHOWN)) + '" by force? Its holder will lose it at its next renewal, and may still be working.')) return;
    const response = await fetch(base + '/api/locks/release', {
      method: 'POST',
      // JSON and the board's own header: what a page of another site cannot send (see lock-board.requests.ts).
      headers: { 'content-type': 'application/json', 'x-lock-board': '1' },
      body: JSON.stringify({ key, confirm: key, holder }),
    });
    // A release by force leaves a lock held by readers alone, and one taken again meanwhile:
    // the answer says whether it released anything, which HTTP 200 alone does not.
    const released = response.ok && (await response.json()).released === true;
    const answer = released ? 'released' : response.ok ? 'not released: held by readers, or taken again meanwhile' : 'release refused: HTTP ' + response.status;
    await load();
    // Said after the refresh, and kept through the next ones (see ANSWER_SHOWN_MS).
    status.textContent = answer;
    status.className = released ? '' : 'error';
    answerUntil = Date.now() + ANSWER_SHOWN_MS;
  }

  function describe(event) {
    const parts = [new Date(event.at).toLocaleTimeString(), event.type, event.key];
    if (event.fencingToken !== undefined) parts.push('#' + event.fencingToken);
    if (event.reason) parts.push(event.reason);
    if (event.outcome) parts.push(event.outcome);
    if (event.holder) parts.push('held by ' + event.holder);
    return parts.join('  ');
  }

  nextButton.addEventListener('click', () => { cursor = nextCursor; load(); });
  firstButton.addEventListener('click', () => { cursor = '0'; load(); });

  const source = new EventSource(base + '/api/events');
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    const item = document.createElement('li');
    item.className = event.type;
    item.textContent = shown(describe(event));
    feed.prepend(item);
    while (feed.children.length > 200) feed.lastChild.remove();
    // Many events in a burst cause one reload, not one each.
    if (reloadTimer === undefined) reloadTimer = setTimeout(() => { reloadTimer = undefined; load(); }, 200);
  };
  window.addEventListener('pagehide', () => source.close());
  load();
  setInterval(load, 1000);
})();
`;
