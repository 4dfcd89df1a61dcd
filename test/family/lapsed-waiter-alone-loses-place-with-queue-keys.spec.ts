import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { sleep } from '../support/lock-app.js';
import { useProxiedLockApps } from '../support/proxied-lock-apps.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review of 4162b19 / a032899. docs/locks.md ("Dead waiters"): a waiter that lapsed
 * while the lock stayed busy for it and refreshes again before it comes free keeps its place;
 * where others could pass it, a lapsed head holds them up as a live one would for one more
 * waiter lease (so, the commit says, "a stall of up to 2 s costs no place").
 *
 * That holds only while someone else keeps the queue alive. `join_queue` sets both queue keys'
 * expiry to one waiter lease from the last join, so when the lapsed waiter was the last to
 * refresh (it waits alone, the most common case: one holder, one waiter), its liveness lapsing
 * deletes the whole queue with it. A caller arriving in that window finds no queue: a writer
 * queues first, a reader or a smaller semaphore request is let in past it, and the waiter that
 * comes back from its stall is queued behind them, though the lock never came free for it.
 */
describe('a waiter alone in the queue that lapses while the lock stays busy, and refreshes', () => {
  const redis = useRedis();
  const LEASE = 60_000;
  const WAITER_LEASE = 1_000;
  const store = () => new LockScripts(redis);

  const serverNow = async (): Promise<number> => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  /**
   * The waiter stalls (a GC pause, a network blip): waits, on Redis' clock, until its liveness
   * lapsed (its score passed, or it is gone). Nothing is written: Redis' own expiry does the rest.
   */
  const untilLapsed = async (waiters: string, member: string) => {
    for (;;) {
      const score = await redis.zscore(waiters, member);
      if (score === null || Number(score) < (await serverNow())) return;
      await sleep(20);
    }
  };

  it('at a mutex: a writer that came during its stall is served first', async () => {
    const scripts = store();
    const base = lockRedisKeys('lock:', 'mutex-alone');
    expect(await scripts.acquire(base, 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // w1 stalls: its liveness lapses while h still holds.
    await untilLapsed(base.waiters, `w1:${LEASE}`);
    expect(await scripts.acquire(base, 'n', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // w1 is back, refreshes; then h lets go. The lock never came free while w1 was lapsed.
    expect(await scripts.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const released = await scripts.release(base, 'h', WAITER_LEASE);
    expect(released.grant?.token).toBe('w1');
  }, 20_000);

  it('at a read lock held by readers: a reader that came within one more waiter lease passes the lapsed writer', async () => {
    const scripts = store();
    const base = lockRedisKeys('lock:', 'read-alone');
    const reader = (token: string) => readKeys(base, token, 'read-alone');
    expect(await scripts.readers.acquire(reader('h'), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.acquire(base, 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // w1 stalls: its liveness lapses (it is back well within one more waiter lease).
    await untilLapsed(base.waiters, `w1:${LEASE}`);
    // A reader asks at once: the lapsed writer at the head should hold it up as a live one would.
    // What Redis holds: the queue went with w1's liveness (join_queue's PEXPIRE of one lease).
    const queued = await redis.lrange(base.queue, 0, -1);
    expect({ queued, probe: (await scripts.readers.acquire(reader('probe'), 'probe', LEASE, false, WAITER_LEASE)).acquired }).toEqual({ queued: [`w1:${LEASE}`], probe: false });
  }, 20_000);

  it('at a semaphore: a smaller request that came within one more waiter lease passes the lapsed one', async () => {
    const scripts = store();
    const key = 'sem-alone';
    const names = (token: string, permits: number) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, 3, permits);
    // 2 of 3 permits held: 1 free, not enough for w1's 2.
    expect(await scripts.semaphores.acquire(names('h', 2), 'h', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(names('w1', 2), 'w1', LEASE, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const { waiters } = names('w1', 2);
    await untilLapsed(waiters, `w1:${LEASE}:2`);
    // A request of 1 fits the free permit but may not pass the lapsed head within its grace.
    expect(await scripts.semaphores.acquire(names('probe', 1), 'probe', LEASE, false, WAITER_LEASE)).toMatchObject({ acquired: false });
  }, 20_000);

  describe('through LockService', () => {
    const { open, throughProxy } = useProxiedLockApps();

    it('a waiter whose connection stalls a little over its liveness lease is served after a writer that came meanwhile', async () => {
      const { app: stalled, proxy } = await throughProxy();
      const holderApp = await open();
      const held = await holderApp.locks.acquire('alone');
      const order: string[] = [];
      const first = stalled.locks.acquire('alone', { waitTimeout: 30_000 }).then(async (lock) => {
        order.push('first');
        await lock.release();
      });
      first.catch(() => undefined);
      let member: string | undefined;
      while (member === undefined) {
        member = (await redis.lrange('lock:{alone}:queue', 0, -1))[0];
        await sleep(10);
      }
      // Started before the stall: the first waiter keeps its place only if it is back within one
      // more waiter lease, and starting an application on a loaded machine can take most of it.
      const other = await open();
      // The first waiter's connection stalls until its liveness lapsed on Redis' clock.
      proxy.cut();
      await untilLapsed('lock:{alone}:waiters', member);
      const second = other.locks.acquire('alone', { waitTimeout: 30_000 }).then(async (lock) => {
        order.push('second');
        await lock.release();
      });
      second.catch(() => undefined);
      while ((await redis.lrange('lock:{alone}:queue', 0, -1)).length === 0) await sleep(10);
      proxy.heal();
      // The first waiter is back: its refresh puts it in the queue again.
      for (;;) {
        const score = await redis.zscore('lock:{alone}:waiters', member);
        if (score !== null && Number(score) > (await serverNow())) break;
        await sleep(10);
      }
      await held.release();
      await Promise.all([first, second]);
      // The lock never came free while the first waiter was lapsed: it keeps its place.
      expect(order).toEqual(['first', 'second']);
    }, 30_000);
  });
});
