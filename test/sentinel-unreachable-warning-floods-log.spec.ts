import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLockApp, type LockApp } from './support/lock-app.js';
import { freePort } from './support/redis-server.js';

/**
 * Review (drivers): with Sentinel options and no sentinel reachable, the module's own connection
 * logs a warning at every reconnection attempt, for as long as the outage lasts.
 *
 * Promise (redis-connection.ts:29-30, the module's own connections): "Without a listener ioredis
 * prints every reconnection failure; say it once per new message" - an outage is reported once,
 * not once per retry (a plain `redis://` URL to a server that is down gives one
 * `connect ECONNREFUSED` line however long it lasts).
 *
 * What happens: ioredis' Sentinel connector reports each failed round as
 * `All sentinels are unreachable. Retrying from scratch after <N>ms. Last error: ...`, with the
 * retry delay inside the text (10 ms, 20 ms, ... growing to ioredis' cap). The de-duplication
 * compares whole messages (redis-connection.ts:30-35, `error.message === lastMessage`), so every
 * retry is a "new message" and is logged: a Sentinel deployment that is unreachable (at startup,
 * or later) floods the application's log with WARN lines, several per second, for the whole outage.
 */
describe('the module own Sentinel connection, no sentinel reachable', () => {
  let app: LockApp | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await app?.close();
    app = undefined;
  });

  it('warns once about the unreachable sentinels, not once per reconnection attempt', async () => {
    const connect = vi.spyOn(Redis.prototype, 'connect');
    const port = await freePort();
    app = await createLockApp({ redis: { sentinels: [{ host: '127.0.0.1', port }], name: 'mymaster', failoverDetector: true } });
    const own = (connect.mock.contexts as Redis[]).find((client) => (client.options as { sentinels?: unknown }).sentinels !== undefined)!;
    connect.mockRestore();
    expect(own).toBeDefined();

    // Let ioredis fail several rounds (counted on the connection itself, not by time).
    let failures = 0;
    own.on('error', (error: Error) => {
      if (error.message.includes('All sentinels are unreachable')) failures++;
    });
    await vi.waitFor(() => expect(failures).toBeGreaterThanOrEqual(4), { timeout: 10_000 });

    const warned = app.logs.lines.filter((line) => line.level === 'warn' && line.message.includes('All sentinels are unreachable'));
    expect(warned.length).toBe(1);
  });
});
