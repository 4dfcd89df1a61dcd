import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockError, type Lock, type LockService } from '../lib/index.js';
import { LAST_ATTEMPT_GRACE_MS } from '../lib/core/engine/waiter-timing.js';
import { blockRedis } from './support/block-redis.js';
import { recordReleases } from './support/mechanism.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

/** Longer than any bound below (LAST_ATTEMPT_GRACE_MS and the waitTimeout given): a wait that honours its bound ends inside it. */
const BLOCK_MS = LAST_ATTEMPT_GRACE_MS * 3;

/**
 * A greedy caller of `key` (it asked again in the turn its release came back), holding the lock,
 * so that its next release is sent with a park request.
 */
async function greedyHolder(locks: LockService, key: string): Promise<Lock> {
  const first = await locks.acquire(key);
  await first.release();
  return locks.acquire(key);
}

/** Settles with the wall-clock time it settled at (comparable with `blockRedis`'s end). */
const settledAt = (call: Promise<unknown>): Promise<{ at: number; outcome: unknown }> =>
  call.then(
    (outcome) => ({ at: Date.now(), outcome }),
    (error: unknown) => ({ at: Date.now(), outcome: error }),
  );

describe('a caller behind a parking release that Redis does not answer', () => {
  useRedis();
  const app = useLockApps();

  async function parkOnTheWay(key: string) {
    const { locks } = await app({ fairness: 'barging' });
    const held = await greedyHolder(locks, key);
    const releases = recordReleases(locks);
    const { ended } = await blockRedis(redisUrl(), BLOCK_MS);
    const releasing = held.release();
    expect(releases.releases.at(-1)!.park).toBeDefined();
    releases.stop();
    return { locks, ended, releasing };
  }

  it('stops waiting on its AbortSignal, before Redis answers', async () => {
    const { locks, ended, releasing } = await parkOnTheWay('park-abort-wait');
    const controller = new AbortController();
    const waiting = settledAt(locks.acquire('park-abort-wait', { signal: controller.signal, waitTimeout: BLOCK_MS * 4 }));
    controller.abort(new Error('caller gave up'));
    const { at, outcome } = await waiting;
    expect(outcome).toEqual(new Error('caller gave up'));
    expect(at).toBeLessThan((await ended)!);
    await releasing;
  });

  it('gives up by its waitTimeout (and tryAcquire by its grace), as an attempt Redis does not answer does', async () => {
    const { locks, ended, releasing } = await parkOnTheWay('park-bounded-wait');
    const acquiring = settledAt(locks.acquire('park-bounded-wait', { waitTimeout: 100 }));
    const trying = settledAt(locks.tryAcquire('park-bounded-wait'));
    const freeAt = (await ended)!;
    for (const { at, outcome } of [await acquiring, await trying]) {
      // Not the lock itself in a failure message: it would be printed with its service.
      expect(outcome instanceof RedisLockError ? outcome.message : 'a lock, after Redis answered').toContain('did not answer');
      expect(at).toBeLessThan(freeAt);
    }
    await releasing;
  });
});

describe('a parking release whose reply is lost', () => {
  useRedis();
  const app = useLockApps();

  it('frees the lock it may have parked: nobody is left waiting for a ttl (the client timed out before the script ran)', async () => {
    // The client gives up on a command after 100 ms; Redis still runs it once free.
    const client = new Redis(redisUrl(), { commandTimeout: 100 });
    try {
      const { locks } = await app({ redis: client, fairness: 'barging', ttl: 30_000 });
      const key = 'park-reply-lost';
      const held = await greedyHolder(locks, key);
      const releases = recordReleases(locks);
      const { ended } = await blockRedis(redisUrl(), 300);
      const releasing = held.release().catch((error: unknown) => error);
      expect(releases.releases.at(-1)!.park).toBeDefined();
      releases.stop();
      await ended;
      expect(await releasing).toBeInstanceOf(Error);
      // Behind whatever the release's failure sent on this connection.
      expect(await locks.isLocked(key)).toBe(false);
    } finally {
      client.disconnect();
    }
  });
});
