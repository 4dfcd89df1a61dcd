import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sleep, type LockApp } from '../support/lock-app.js';
import { useProxiedLockApps } from '../support/proxied-lock-apps.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review: docs/locks.md ("Dead waiters") promises that a waiter that lapsed while the
 * lock stayed busy for it, and refreshes again before it comes free, keeps its place. The
 * read side's acquire read (and so dropped) a lapsed head on every attempt, and a semaphore
 * with some free permits did the same for a request that needed more. Here the first waiter's
 * connection goes through a proxy that is cut for a little over its 1 s liveness lease (a GC
 * pause, a network blip) while someone merely asks; it refreshes before the holder lets go, and
 * be the one the release hands the lock to, before the waiter that queued after it. (The same on
 * the scripts and the in-memory store: lapsed-head-kept-while-busy-memory-matches-redis.spec.ts.)
 *
 * The hand-over is read from the release's own message (`<token>:<fencing token>` on the lock's
 * channel), not from which waiter returned first: on a loaded machine the first one's process may
 * claim its grant after the 1 s grant lease, and the lock then rightly goes on to the second.
 */
describe('a waiter that lapsed at the head of a busy lock and refreshes before it comes free', () => {
  const redis = useRedis();
  const { open, throughProxy } = useProxiedLockApps();
  const serverNow = async (): Promise<number> => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const waitForQueue = async (queueKey: string, length: number): Promise<string[]> => {
    for (;;) {
      const members = await redis.lrange(queueKey, 0, -1);
      if (members.length >= length) return members;
      await sleep(10);
    }
  };

  /**
   * Queues `first` (through the proxy) then `second` behind `held`; cuts the first one's
   * connection until its liveness ran out on Redis' clock, runs `probe`, heals, waits for its
   * refresh, lets `held` go. Answers the head after the refresh, the first's member, whom the
   * release granted the lock and who was served.
   */
  const scenario = async (keys: { queue: string; waiters: string; channel: string }, wait: (app: LockApp) => Promise<{ release(): Promise<unknown> }>, release: () => Promise<unknown>, probe: () => Promise<void>) => {
    const { app: stalled, proxy } = await throughProxy();
    const other = await open();
    const order: string[] = [];
    const first = wait(stalled).then(async (lock) => {
      order.push('first');
      await lock.release();
    });
    first.catch(() => undefined);
    const [firstMember] = await waitForQueue(keys.queue, 1);
    const second = wait(other).then(async (lock) => {
      order.push('second');
      await lock.release();
    });
    second.catch(() => undefined);
    await waitForQueue(keys.queue, 2);

    proxy.cut();
    while (Number(await redis.zscore(keys.waiters, firstMember!)) >= (await serverNow())) await sleep(50);
    await probe();
    proxy.heal();
    for (;;) {
      const score = await redis.zscore(keys.waiters, firstMember!);
      if (score !== null && Number(score) > (await serverNow())) break;
      await sleep(20);
    }
    const headAfterRefresh = (await redis.lrange(keys.queue, 0, -1))[0];
    const listener = new Redis(redisUrl());
    const grants: string[] = [];
    listener.on('message', (_channel: string, message: string) => grants.push(message.split(':')[0]!));
    try {
      await listener.subscribe(keys.channel);
      await release();
      await Promise.all([first, second]);
    } finally {
      listener.disconnect();
    }
    // Both were served; the release's grant named the first one.
    return { firstMember, seen: { headAfterRefresh, firstGrant: grants[0], served: [...order].sort() } };
  };

  for (const probe of ['read', 'write'] as const) {
    it(`keeps its place at a read-write lock held by a reader when a ${probe} tryAcquire asks meanwhile`, async () => {
      const readers = await open();
      const reader = await readers.locks.acquire('doc', { mode: 'read' });
      const { firstMember, seen } = await scenario(
        { queue: 'lock:{doc}:queue', waiters: 'lock:{doc}:waiters', channel: 'lock:{doc}:released' },
        (app) => app.locks.acquire('doc', { waitTimeout: 30_000 }),
        () => reader.release(),
        async () => {
          expect(await readers.locks.tryAcquire('doc', probe === 'read' ? { mode: 'read' } : {})).toBeNull();
          expect(await readers.locks.isLocked('doc')).toBe(true);
        },
      );
      expect(seen).toEqual({ headAfterRefresh: firstMember, firstGrant: firstMember!.split(':')[0], served: ['first', 'second'] });
    }, 30_000);
  }

  it('keeps its place at a semaphore whose free permits are fewer than it asks when a smaller request asks meanwhile', async () => {
    const holders = await open();
    const semaphore = { limit: 3 } as const;
    // 2 of 3 permits held: 1 free, not enough for a request of 2.
    const held = await holders.locks.acquire('export', { ...semaphore, permits: 2 });
    const { firstMember, seen } = await scenario(
      { queue: 'lock:{export}:sq', waiters: 'lock:{export}:sw', channel: 'lock:{export}:sr' },
      (app) => app.locks.acquire('export', { ...semaphore, permits: 2, waitTimeout: 30_000 }),
      () => held.release(),
      // A request of 1 fits the free permit but may not overtake the queue: refused.
      async () => expect(await holders.locks.tryAcquire('export', { ...semaphore, permits: 1 })).toBeNull(),
    );
    expect(seen).toEqual({ headAfterRefresh: firstMember, firstGrant: firstMember!.split(':')[0], served: ['first', 'second'] });
  }, 30_000);
});
