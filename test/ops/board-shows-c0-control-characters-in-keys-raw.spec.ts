import { runInNewContext } from 'node:vm';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * docs/observability.md: "The library's own log lines, error messages and lock board show keys
 * and labels with control characters, line separators and every invisible formatting character
 * [...] written out as \uXXXX, so that two keys never read the same." Log lines do (quoteKey:
 * JSON.stringify escapes C0 controls), but the board's page script escapes only UNSAFE_TEXT
 * (DEL, C1, U+2028/9, Cf, Cs) and leaves the C0 controls (U+0000-U+001F: tab, newline, carriage
 * return, NUL, backspace, ESC) raw. A key "report\nnightly" is shown in its cell as
 * "report nightly" (HTML collapses the newline), the same as the key "report nightly"; and the
 * force-release confirmation dialog gets raw newlines from the key, so a key can lay out the
 * dialog's text as it likes. The page's script runs here in a VM against the board's real JSON.
 */
const C0 = /[\u0000-\u001f]/;

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

describe("the lock board page and keys with C0 control characters", () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('shows a key with a newline, a tab or a NUL written out, as log lines and error messages do', async () => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowForceRelease: true, allowWithoutGuards: true })],
    })
      .setLogger(logs)
      .compile();
    app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: logs });
    await app.listen(0, '127.0.0.1');
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/locks`;
    const locks = app.get(LockService);
    const keys = ['report nightly', 'report\nnightly', 'report\tnightly', 'report\u0000 nightly'];
    for (const key of keys) await locks.acquire(key, { label: 'Reports.run' });
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
    for (let i = 0; i < 50 && tbody.children.length < 4; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(tbody.children).toHaveLength(4);
    const keyCells = tbody.children.map((row) => row.children.find((td) => td.className === 'key')!);
    // Click "Release by force" on each row: the confirmation text names the key.
    for (const row of tbody.children) all(row).find((el) => el.className === 'release')!.listeners.click!();
    const shown = [...keyCells.map((td) => td.textContent), ...keyCells.map((td) => td.title), ...confirms];
    // Every text the page puts on screen for these keys: none may hold a raw C0 control character.
    expect(shown.filter((text) => C0.test(text)).map((text) => JSON.stringify(text))).toEqual([]);
  });
});
