/**
 * Found by review (twenty-ninth session): the board's routes read Redis outside the lock service's shutdown bound.
 * `LockService.inspect()`/`isLocked()` end with shutdown's first phase ("so that a frozen Redis
 * cannot hold app.close() up through that request", lock-manager.ts `untilShutdown`), but the
 * board's list route sends `INFO` and `SCAN` itself (lock-admin.ts `scanServer`), and its release
 * reads the owner with `store.inspect` directly (`forceRelease`): on a frozen Redis (SIGSTOP, a
 * partition that keeps the TCP connection open) they never answer. Nest closes the HTTP server
 * before the module's onApplicationShutdown closes the Redis connection, and the server waits for
 * that request: an open board tab (it polls every second) keeps app.close() from ending for as
 * long as Redis stays frozen, far past shutdownTimeout.
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() while a board request waits on a frozen Redis', () => {
  const own = useOwnRedis();
  const opened: INestApplication[] = [];
  afterEach(async () => {
    own.server().resume();
    await Promise.all(opened.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it.each([
    // The control: the page itself reads no Redis; the close ends.
    ['the page', 200, (url: string) => fetch(url, { headers: { 'x-admin': 'yes' } })],
    ['the lock list', 503, (url: string) => fetch(`${url}/api/locks`, { headers: { 'x-admin': 'yes' } })],
    [
      'a release by force',
      503,
      (url: string) =>
        fetch(`${url}/api/locks/release`, {
          method: 'POST',
          headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
          // The holder the list shows (see below): a release that names it reads the owner first.
          body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
        }),
    ],
  ])('ends within shutdownTimeout with %s in flight', { timeout: 30_000 }, async (_what, status, send) => {
    const app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s', isGlobal: true }),
        RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true }),
      ],
    });
    opened.push(app);
    const url = `${await listenOnLoopback(app)}/locks`;
    // Another holder's lock (its process is gone): the board shows it.
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);
    expect((await send(url).catch(() => undefined)) === undefined).toBe(false);
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);

    own.server().pause();
    const request = send(url).then(
      (response) => response.status,
      (error: Error) => error.message,
    );
    await sleep(300);
    const startedAt = performance.now();
    const closed: { after?: number } = {};
    void app.close().then(() => (closed.after = Math.round(performance.now() - startedAt)));
    // shutdownTimeout is 1 s: give it 8 s.
    await expect.poll(() => closed.after ?? 'app.close() still pending', { timeout: 8_000, interval: 100 }).toBeTypeOf('number');
    own.server().resume();
    // Answered (the page before the freeze; a read of Redis refused as the application closes), not dropped.
    expect(await request).toBe(status);
  });
});
