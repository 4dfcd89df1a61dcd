import { runInNewContext } from 'node:vm';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Keys and holder labels come from whoever can write them (a key template fed from a request,
 * see docs/observability.md: "escape them wherever you show them"). The library escapes the
 * bidirectional and invisible formatting characters that "make a line read otherwise" in every
 * log line and error (quoteKey, lib/core/keys/quote-key.ts), but its own lock board puts keys,
 * labels and the force-release confirmation text on screen raw (lib/board/lock-board.assets.ts:
 * cell()/shorten()/forceRelease()). A right-to-left override makes "payments:\u202E24" display as
 * "payments:42": two rows read the same, and the confirmation names a lock other than it releases.
 * The page's script runs here in a VM against the board's real JSON, with a minimal DOM stand-in.
 */
const UNSAFE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

type El = { tag: string; textContent: string; className: string; title: string; children: El[]; listeners: Record<string, () => void>; hidden: boolean; dataset: Record<string, string>; type: string };
function element(tag: string): El & Record<string, unknown> {
  const el = {
    tag, textContent: '', className: '', title: '', children: [] as El[], listeners: {} as Record<string, () => void>, hidden: false, dataset: {}, type: '',
    appendChild(child: El) { el.children.push(child); return child; },
    prepend(child: El) { el.children.unshift(child); },
    replaceChildren() { el.children = []; },
    addEventListener(name: string, fn: () => void) { el.listeners[name] = fn; },
    remove() {},
    get lastChild() { return el.children.at(-1); },
  };
  return el as never;
}
function all(el: El): El[] {
  return [el, ...el.children.flatMap(all)];
}

describe('the lock board page and a key with a right-to-left override', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /**
   * Holds `keys` (label `Billing.run`), runs the board's page script on the board's real JSON,
   * clicks "Release by force" on every row (dismissed), and returns what the page put on screen.
   */
  async function shownFor(keys: string[]): Promise<{ cells: string[]; titles: string[]; confirms: string[] }> {
    const logs = new CapturedLogs();
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowForceRelease: true, allowWithoutGuards: true })],
    }, { adapter: new ExpressAdapter(), logs, logger: logs });
    const url = `${await listenOnLoopback(app)}/locks`;
    const locks = app.get(LockService);
    for (const key of keys) await locks.acquire(key, { label: 'Billing.run' });
    const page = (await (await fetch(`${url}/api/locks`, { headers: { accept: 'application/json' } })).json()) as { locks: { key: string }[] };
    expect(page.locks.map((lock: { key: string }) => lock.key).sort()).toEqual([...keys].sort());
    const script = await (await fetch(`${url}/board.js`)).text();

    const byId: Record<string, El> = {};
    const tbody = element('tbody');
    const confirms: string[] = [];
    const document = {
      body: { dataset: { base: '/locks' } },
      querySelector: () => tbody,
      getElementById: (id: string) => (byId[id] ??= element(id)),
      createElement: (tag: string) => element(tag),
    };
    const context = {
      document,
      window: { confirm: (text: string) => (confirms.push(text), false), addEventListener: () => undefined },
      fetch: async () => ({ ok: true, status: 200, json: async () => page }),
      EventSource: class { onmessage?: unknown; close() {} },
      // The page's periodic refresh is not needed here: one load is.
      setInterval: () => 0, clearInterval: () => undefined,
      encodeURIComponent, setTimeout, clearTimeout, Date, JSON, String, Math, Promise, Error,
    };
    runInNewContext(script, context);
    for (let i = 0; i < 50 && tbody.children.length < keys.length; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(tbody.children).toHaveLength(keys.length);
    const keyCells = tbody.children.map((row) => row.children.find((td) => td.className === 'key')!);
    // Click "Release by force" on each row: the confirmation text names the key.
    for (const row of tbody.children) all(row).find((el) => el.className === 'release')!.listeners.click!();
    return { cells: keyCells.map((td) => td.textContent), titles: keyCells.map((td) => td.title), confirms };
  }

  it('shows the key (and the force-release confirmation) with the formatting character escaped, as logs do', async () => {
    const { cells, titles, confirms } = await shownFor(['payments:42', 'payments:\u202e24']);
    expect([...cells, ...titles, ...confirms].filter((text) => UNSAFE.test(text))).toEqual([]);
    // The two rows read apart: the override is written out, as a log line writes it.
    expect(cells.sort()).toEqual(['payments:42', 'payments:\\u202e24']);
    expect(confirms.sort()).toEqual([expect.stringContaining('"payments:42"'), expect.stringContaining('"payments:\\u202e24"')]);
  });

  // Found by review: the page escaped UNSAFE_TEXT but left the C0 controls raw ("report\nnightly"
  // read as "report nightly", and a key could lay out the confirmation), which log lines escape.
  it('shows a key with a newline, a tab or a NUL written out, as log lines and error messages do', async () => {
    const { cells, titles, confirms } = await shownFor(['report nightly', 'report\nnightly', 'report\tnightly', 'report\u0000 nightly']);
    // Every text the page puts on screen for these keys: none may hold a raw C0 control character.
    expect([...cells, ...titles, ...confirms].filter((text) => /[\u0000-\u001f]/.test(text)).map((text) => JSON.stringify(text))).toEqual([]);
  });

  // Found by review (twenty-ninth session): the escape wrote an unsafe character as `\uXXXX` and
  // left a backslash as it was, so the key holding the six characters `\u202e` read exactly as the
  // key holding a real right-to-left override, in its cell, its title and the confirmation. A
  // backslash is written doubled now, as log lines write it (quoteKey JSON-encodes).
  it('shows a key with a real override and a key with the text "\\u202e" apart', async () => {
    const { cells, titles, confirms } = await shownFor(['payments:\u202e24', 'payments:\\u202e24']);
    expect(new Set(cells).size).toBe(2);
    expect(new Set(titles).size).toBe(2);
    expect(new Set(confirms).size).toBe(2);
    expect(cells.sort()).toEqual(['payments:\\\\u202e24', 'payments:\\u202e24']);
  });
});
