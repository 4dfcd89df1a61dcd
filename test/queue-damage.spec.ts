import { describe, expect, it } from 'vitest';
import { sleep, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/** What the queue keys look like after an eviction or a foreign write, and what we do then. */
describe('a damaged waiting queue', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('rebuilds a lost queue list from its waiters, so that nobody jumps them', async () => {
    const holder = await app({ ttl: 30_000 });
    const waiters = [await app(), await app()];
    const newcomer = await app();
    const held = await holder.locks.acquire('z');
    const waiting = waiters.map(({ locks }) => locks.acquire('z', { waitTimeout: 10_000 }));
    await sleep(150);
    // Evicted (or expired a moment before its set): the waiters are left in the sorted set only.
    await redis.del('lock:{z}:queue');
    await held.release();
    expect(await newcomer.locks.tryAcquire('z')).toBeNull();
    // Both waiters are served, one after the other.
    const first = await Promise.race(waiting.map((lock, index) => lock.then((held) => ({ held, index }))));
    await first.held.release();
    await (await waiting[1 - first.index]!).release();
  });

  it('skips a queue member with a ttl of 0 instead of failing the release', async () => {
    const holder = await app({ ttl: 30_000 });
    const held = await holder.locks.acquire('q');
    // Nothing of ours writes this; a foreign or broken writer might.
    await redis.rpush('lock:{q}:queue', 'foreign:0');
    await redis.zadd('lock:{q}:waiters', Date.now() + 60_000, 'foreign:0');
    await redis.pexpire('lock:{q}:queue', 60_000);
    await redis.pexpire('lock:{q}:waiters', 60_000);
    await expect(held.release()).resolves.toBeUndefined();
    expect(await redis.exists('lock:{q}', 'lock:{q}:queue', 'lock:{q}:waiters')).toBe(0);
    expect(await holder.locks.tryAcquire('q')).not.toBeNull();
  });

  it.each([
    ['a mutex', {}],
    ['a semaphore', { limit: 1 }],
  ] as const)('keeps the waiters of a lost queue list ahead of later arrivals (%s)', async (_kind, options) => {
    const holder = await app({ ttl: 30_000 });
    const early = [await app(), await app()];
    const late = await app();
    const held = await holder.locks.acquire('o', options);
    const order: string[] = [];
    const wait = (who: string, locks: typeof holder.locks) =>
      locks.acquire('o', { ...options, waitTimeout: 10_000 }).then(async (lock) => {
        order.push(who);
        await lock.release();
      });
    const waiting = [wait('early-1', early[0]!.locks), wait('early-2', early[1]!.locks)];
    await sleep(150);
    // The list is evicted on its own: the early waiters are left in the sorted set.
    const queue = 'limit' in options ? 'lock:{o}:sq' : 'lock:{o}:queue';
    await redis.del(queue);
    const latecomer = wait('late', late.locks);
    await sleep(100);
    await held.release();
    await Promise.all([...waiting, latecomer]);
    expect(order.indexOf('late')).toBe(2);
  });

  it('reads a key held by readers that all crashed as free, and one with a live reader as held', async () => {
    const { locks } = await app();
    // What readers that all died leave behind: the marker and their entries, no reader key.
    await redis.set('lock:{r}', '~r');
    await redis.hset('lock:{r}:readers', 'gone', '1');
    expect(await locks.isLocked('r')).toBe(false);
    expect(await locks.inspect('r')).toMatchObject({ held: false });
    await redis.set('lock:{r}:reader:gone', 'gone', 'PX', 10_000);
    expect(await locks.isLocked('r')).toBe(true);
    expect(await locks.inspect('r')).toMatchObject({ held: true });
  });
});
