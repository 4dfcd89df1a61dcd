/**
 * Found by review (thirty-eighth session): `isLocked(key)` and `inspect(key)` waited for Redis'
 * answer without a bound. With Redis frozen (SIGSTOP here; a network cut that resets nothing, a
 * server stuck in a long command look the same) and a client without a command timeout (ioredis'
 * default), they never settled until the application closed: a route or a health check awaiting
 * one hung with it. (Redis killed: about 10 s, ioredis' 20 reconnections per request.) Every
 * other call that asks Redis is bounded: `tryAcquire()` waits an attempt's 1 s grace, quorum
 * mode's reads 200 ms per master, and docs/guarantees.md says both reject with a
 * `RedisLockError` when Redis is down, frozen or out of reach. They now reject once they have
 * waited an attempt's grace, naming the call.
 */
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { settledRecord } from '../support/mechanism.js';

describe('isLocked() and inspect() on a Redis that does not answer', () => {
  // Its own server, since it is frozen.
  const own = useFrozenRedis();

  const calls: [string, (locks: LockApp['locks']) => Promise<unknown>][] = [
    ['isLocked', (locks) => locks.isLocked('frozen:<i>')],
    ['inspect', (locks) => locks.inspect('frozen:<i>')],
  ];
  // Both in flight at once on one frozen Redis: each waits out its own bound, together.
  it('isLocked() and inspect() each reject with a RedisLockError naming the call while Redis is still frozen', async () => {
    const app = own.opened(await createLockApp({ redis: own.url() }));
    // Answered while Redis answers (and its scripts loaded).
    for (const [, call] of calls) await call(app.locks);
    own.server().pause();
    const reads = calls.map(([method, call]) => ({ method, read: settledRecord(call(app.locks)) }));
    await expect.poll(() => reads.every(({ read }) => read.settled !== undefined), { timeout: 8_000 }).toBe(true);
    for (const { method, read } of reads) {
      expect(read.settled!.error).toBeInstanceOf(RedisLockError);
      expect(String((read.settled!.error as Error).message)).toMatch(new RegExp(`^${method}\\("frozen:<i>"\\): Redis did not answer within \\d+ ms\\.$`));
    }
  });
});
