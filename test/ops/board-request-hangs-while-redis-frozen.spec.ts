/**
 * Found by review (thirty-eighth session): the lock board's list and its release by force waited
 * for Redis without a bound, ended only by the application's close (see
 * board-close-held-by-list-on-frozen-redis.spec.ts). With Redis frozen (SIGSTOP here; a network
 * cut that resets nothing, a server stuck in a long command look the same) and a client without
 * a command timeout, an open board tab's request hung for as long as Redis stayed so, and the
 * page said nothing, where `isLocked()` and `inspect()` reject after their bound. Both now answer
 * 503 while Redis is still frozen, saying that Redis did not answer.
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('a board request while Redis is frozen', () => {
  const own = useOwnRedis();
  const opened: INestApplication[] = [];
  afterEach(async () => {
    own.server().resume();
    await Promise.all(opened.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it.each([
    ['the lock list', (url: string) => fetch(`${url}/api/locks`, { headers: { 'x-admin': 'yes' } })],
    [
      'a release by force',
      (url: string) =>
        fetch(`${url}/api/locks/release`, {
          method: 'POST',
          headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
          body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
        }),
    ],
  ])('%s answers 503 while Redis is still frozen', { timeout: 30_000 }, async (_what, send) => {
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: own.url(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true })],
    });
    opened.push(app);
    const url = `${await listenOnLoopback(app)}/locks`;
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);
    // Answered while Redis answers (the scripts loaded, the connection ready).
    expect((await send(url)).status).toBeLessThan(500);
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);

    own.server().pause();
    const answer: { status?: number; body?: string } = {};
    void send(url).then(async (response) => {
      answer.body = await response.text();
      answer.status = response.status;
    });
    await expect.poll(() => answer.status, { timeout: 15_000, interval: 100 }).toBeDefined();
    expect(answer.status).toBe(503);
    expect(answer.body).toContain('did not answer');
  });
});
