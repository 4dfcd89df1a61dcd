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
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { sleep } from '../support/lock-app.js';

const requests: [string, number, (url: string) => Promise<Response>][] = [
  // The control: the page itself reads no Redis.
  ['the page', 200, (url) => fetch(url, { headers: { 'x-admin': 'yes' } })],
  ['the lock list', 503, (url) => fetch(`${url}/api/locks`, { headers: { 'x-admin': 'yes' } })],
  [
    'a release by force',
    503,
    (url) =>
      fetch(`${url}/api/locks/release`, {
        method: 'POST',
        headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
        // The holder the list shows (see below): a release that names it reads the owner first.
        body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
      }),
  ],
];

describe('app.close() while a board request waits on a frozen Redis', () => {
  const own = useFrozenRedis();

  // All three in flight at once on one frozen Redis: a close that any of them held up would not end.
  it('ends within shutdownTimeout with the page, the lock list and a release by force in flight', { timeout: 30_000 }, async () => {
    const app = own.opened(
      await createHttpApp({
        imports: [
          RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s', isGlobal: true }),
          RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true }),
        ],
      }),
    );
    const url = `${await listenOnLoopback(app)}/locks`;
    for (const [, , send] of requests) {
      // Another holder's lock (its process is gone): the board shows it.
      await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);
      expect((await send(url).catch(() => undefined)) === undefined).toBe(false);
    }
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);

    own.server().pause();
    const answered = requests.map(([what, , send]) =>
      send(url).then(
        (response) => `${what}: ${response.status}`,
        (error: Error) => `${what}: ${error.message}`,
      ),
    );
    await sleep(300);
    // shutdownTimeout is 1 s: give it 8 s.
    await closesWithin(app, 8_000);
    own.server().resume();
    // Answered (the page before the freeze; a read of Redis refused as the application closes), not dropped.
    expect(await Promise.all(answered)).toEqual(requests.map(([what, status]) => `${what}: ${status}`));
  });
});
