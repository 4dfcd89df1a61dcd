import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { SEMAPHORE_RELEASE } from '../lib/core/semaphore/semaphore-lua.js';
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

const uniqueKey = () => `semlapse-${randomUUID().slice(0, 8)}`;
const WAITER_LEASE = 1_000;
const names = (key: string, limit: number, permits = 1) => (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, permits);

describe('a semaphore permit that lapsed (its lease ran out on Redis\' clock, or it was evicted)', () => {
  const redis = useRedis();
  const store = () => new LockScripts(redis);

  /** Live permit keys of the semaphore (each is a holder Redis still lets hold). */
  const livePermits = async (key: string) => (await redis.keys(`lock:{${key}}:permit:*`)).length;

  it('does not count a permit twice when a waiter whose grant lapsed asks again under its token (fast path)', async () => {
    const scripts = store();
    const key = uniqueKey();
    const holders = `lock:{${key}}:holders`;
    const keys = names(key, 3);
    // The grant lease a release gives a waiter (the waiters' liveness lease): short here.
    const grantLease = 200;
    // Three holders fill the semaphore; w waits.
    for (const token of ['h1', 'h2', 'h3']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, grantLease)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(keys('w'), 'w', 60_000, true, grantLease)).toMatchObject({ acquired: false });
    // h1 leaves: the release hands its permit to w (for the grant lease) and, the queue now
    // empty, drops ':queued'.
    expect(await scripts.semaphores.release(keys('h1'), 'h1', grantLease)).toMatchObject({ released: true, grants: [{ token: 'w' }] });
    expect(await redis.hget(holders, ':queued')).toBeNull();
    // w's process stalls past its grant lease: Redis' clock drops the permit.
    while ((await redis.exists(keys('w').lock)) > 0) await sleep(20);
    // h3 leaves (fast path): one permit is free for anyone.
    expect(await scripts.semaphores.release(keys('h3'), 'h3', grantLease)).toMatchObject({ released: true });
    // w's next attempt, under the same token (the engine's refresh of its place).
    expect(await scripts.semaphores.acquire(keys('w'), 'w', 60_000, true, grantLease)).toMatchObject({ acquired: true });
    // Two live holders (h2, w): ':used' must say 2.
    expect(await livePermits(key)).toBe(2);
    const usedWithTwoHolders = await redis.hget(holders, ':used');
    // Both leave: nothing is held any more.
    for (const token of ['w', 'h2']) expect(await scripts.semaphores.release(keys(token), token, grantLease)).toMatchObject({ released: true });
    expect(await livePermits(key)).toBe(0);
    const leftBehind = await redis.hgetall(holders);
    // Three new callers must all fit a limit of 3 on an empty semaphore.
    const replies = [];
    for (const token of ['a', 'b', 'c']) replies.push((await scripts.semaphores.acquire(keys(token), token, 60_000, false, grantLease)).acquired);
    expect({ usedWithTwoHolders, leftBehind, replies }).toEqual({ usedWithTwoHolders: '2', leftBehind: {}, replies: [true, true, true] });
  });

  it('answers "not yours" to the last holder whose permit lapsed while the holders hash lived on', async () => {
    const scripts = store();
    const key = uniqueKey();
    const holders = `lock:{${key}}:holders`;
    const keys = names(key, 2);
    // a is taken alone, b unfolds it; a leaves: b is the last holder, in the full layout, no due set.
    for (const token of ['a', 'b']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect(await redis.hget(holders, ':due')).toBeNull();
    // b crashes or stalls: its permit lapses on Redis' clock (made to lapse now); the hash lives on.
    await redis.pexpire(keys('b').lock, 1);
    while ((await redis.exists(keys('b').lock)) > 0) await sleep(5);
    expect(await redis.exists(holders)).toBe(1);
    // Its release must say the lease was lost (as the mutex does, and as docs/redis-data.md promises:
    // "one DEL of the permit and the hash, whose count (2, or 1 when the permit was gone) says whether
    // the caller still held it").
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: false });
  });

  it('does not answer "acquired" to a granted waiter whose permit key is gone (no permit, lease not restarted)', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 1);
    expect(await scripts.semaphores.acquire(keys('h'), 'h', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(keys('w'), 'w', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.semaphores.release(keys('h'), 'h', WAITER_LEASE)).toMatchObject({ released: true, grants: [{ token: 'w' }] });
    // The granted permit disappears before its due score (evicted, or made to lapse: PEXPIRE 1 ms).
    await redis.pexpire(keys('w').lock, 1);
    while ((await redis.exists(keys('w').lock)) > 0) await sleep(5);
    // w's next attempt under its token: the full path finds its entry and answers "granted already".
    const reply = await scripts.semaphores.acquire(keys('w'), 'w', 60_000, true, WAITER_LEASE);
    // Acquired must mean a live permit key for w, as for every other "acquired" answer.
    const permit = await redis.pttl(keys('w').lock);
    expect({ acquired: reply.acquired, permitPttl: permit > 0 ? 'live' : permit }).toEqual({ acquired: true, permitPttl: 'live' });
  });

  describe('through LockService', () => {
    const app = useLockApps();

    it('keeps its limit after a waiter stalled past its grant and retried under the same token', async () => {
      const scripts = store();
      const waiter = await app({ ttl: 30_000 });
      const key = uniqueKey();
      const holders = `lock:{${key}}:holders`;
      const keys = names(key, 3);
      for (const token of ['h1', 'h2', 'h3']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
      const waiting = waiter.locks.acquire(key, { limit: 3, waitTimeout: 15_000 });
      while ((await redis.exists(`lock:{${key}}:sq`)) === 0) await sleep(5);
      await sleep(50);
      // Continue from a reply (the poll phase): the timers run before the next socket reads.
      await redis.ping();
      // Two releases (h1's grants the waiter its permit for the grant lease, h3's frees one more)
      // sent from another process while this one (the waiter's) is stalled, for longer than the
      // grant lease, before it can read the grant's message: execFileSync blocks the event loop.
      const release = (token: string) =>
        execFileSync('redis-cli', ['-u', redisUrl(), 'EVAL', SEMAPHORE_RELEASE.derived, '1', keys(token).lock, token, `0:${WAITER_LEASE}:0:3`]);
      release('h1');
      release('h3');
      execFileSync('sleep', ['1.5']);
      const lock = await waiting;
      const live = (await redis.keys(`lock:{${key}}:permit:*`)).length;
      const used = await redis.hget(holders, ':used');
      await lock.release();
      await scripts.semaphores.release(keys('h2'), 'h2', WAITER_LEASE);
      const leftBehind = await redis.hgetall(holders);
      // Nobody holds it now: three callers must fit a limit of 3 (a full count runs for the third).
      const taken = [];
      for (let i = 0; i < 3; i++) taken.push(await waiter.locks.acquire(key, { limit: 3, waitTimeout: 0 }).then((held) => held, () => undefined));
      const admitted = taken.filter((held) => held !== undefined).length;
      for (const held of taken) await held?.release();
      expect({ live, used, leftBehind, admitted }).toEqual({ live: 2, used: '2', leftBehind: {}, admitted: 3 });
    });
  });
});
