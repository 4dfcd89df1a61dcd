/**
 * Found by review (thirty-eighth session): the lock board's list and its release by force waited
 * for Redis without a bound, ended only by the application's close (see
 * board-close-held-by-list-on-frozen-redis.spec.ts). With Redis frozen (SIGSTOP here; a network
 * cut that resets nothing, a server stuck in a long command look the same) and a client without
 * a command timeout, an open board tab's request hung for as long as Redis stayed so, and the
 * page said nothing, where `isLocked()` and `inspect()` reject after their bound. Both now answer
 * 503 while Redis is still frozen, saying that Redis did not answer.
 */
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';

const requests: [string, (url: string) => Promise<Response>][] = [
  ['the lock list', (url) => fetch(`${url}/api/locks`, { headers: { 'x-admin': 'yes' } })],
  [
    'a release by force',
    (url) =>
      fetch(`${url}/api/locks/release`, {
        method: 'POST',
        headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
        body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
      }),
  ],
];

describe('a board request while Redis is frozen', () => {
  const own = useFrozenRedis();

  // Both routes in flight on one frozen Redis: each waits out the board's 5 s bound, at once.
  it('the lock list and a release by force each answer 503 while Redis is still frozen', { timeout: 30_000 }, async () => {
    const app = own.opened(
      await createHttpApp({
        imports: [RedisLockModule.forRoot({ redis: own.url(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true })],
      }),
    );
    const url = `${await listenOnLoopback(app)}/locks`;
    for (const [, send] of requests) {
      await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);
      // Answered while Redis answers (the scripts loaded, the connection ready).
      expect((await send(url)).status).toBeLessThan(500);
    }
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);

    own.server().pause();
    const answers = requests.map(([what, send]) => {
      const answer: { what: string; status?: number; body?: string } = { what };
      void send(url).then(async (response) => {
        answer.body = await response.text();
        answer.status = response.status;
      });
      return answer;
    });
    // Each answered, 503, while Redis is still frozen (a request still pending shows as such).
    await expect.poll(() => answers.map(({ what, status }) => `${what}: ${status ?? 'pending'}`), { timeout: 15_000, interval: 100 }).toEqual(requests.map(([what]) => `${what}: 503`));
    for (const answer of answers) expect(answer.body).toContain('did not answer');
  });
});
