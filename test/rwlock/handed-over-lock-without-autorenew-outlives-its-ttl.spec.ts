/**
 * Found by review (read-write locks at the edges). `autoRenew: false` says "the lock expires after
 * `ttl`", as a lock taken by its own attempt does, counted from that attempt. A lock a release
 * hands over (a writer the last reader lets in, a reader a writer lets in) is held on a 1 s grant
 * lease counted from the waiter's last attempt, and its first renewal, a third of the way into
 * that lease, renewed it to the whole ttl from then: the lock, renewed by nobody, stayed held
 * about a third of a second past its ttl in Redis, kept from the next waiter. The first renewal
 * of a lock without a watchdog now renews only to what is left of its ttl.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { Redis } from 'ioredis';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { watchCommands } from '../support/monitor.js';
import { useTestingApps } from '../support/testing-apps.js';

const TTL = 3_000;

describe('a lock handed over by a release, with autoRenew: false', () => {
  const open = useTestingApps();

  for (const [holderMode, waiterMode] of [['read', 'write'], ['write', 'read']] as const) {
    it(`is held no longer than its ttl from its last attempt (a ${waiterMode} lock handed over by a ${holderMode} release, in memory)`, async () => {
      const store = new InMemoryLocks({ clock: 'manual' });
      const [holder, waiter, next] = [await open(store), await open(store), await open(store)];
      const held = await holder.acquire('handed', { mode: holderMode, ttl: '10s' });
      const times: { handed?: number; lost?: number; next?: number } = {};
      const handed = waiter.acquire('handed', { mode: waiterMode, ttl: TTL, autoRenew: false, waitTimeout: '20s' }).then((lock) => {
        times.handed = store.clock.now();
        lock.signal.addEventListener('abort', () => (times.lost = store.clock.now()), { once: true });
        return lock;
      });
      // Its attempts are all made by now (queued): the last one is no later than this.
      await store.manualClock.advance('10ms');
      const lastAttemptBy = store.clock.now();
      const following = next.acquire('handed', { waitTimeout: '20s' }).then((lock) => ((times.next = store.clock.now()), lock));
      await held.release();
      await store.manualClock.advance('10s');
      const lock: Lock = await handed;
      const nextLock = await following;
      expect(times.handed).toBe(lastAttemptBy);
      // Before: lost at 3,321 ms after it was handed over, the next waiter let in then.
      expect(times.lost! - lastAttemptBy).toBeLessThanOrEqual(TTL);
      expect(times.next! - lastAttemptBy).toBeLessThanOrEqual(TTL);
      await lock.release();
      await nextLock.release();
    });
  }

  describe('on Redis', () => {
    const apps: LockApp[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
    });

    it('renews it at its first renewal only to what is left of its ttl', { timeout: 20_000 }, async () => {
      const [holder, waiter] = [await createLockApp(), await createLockApp()];
      apps.push(holder, waiter);
      const key = `handed-no-autorenew:${process.pid}:${Date.now()}`;
      const watch = await watchCommands(`lock:{${key}}`);
      const redis = new Redis(redisUrl());
      try {
        const held = await holder.locks.acquire(key, { mode: 'read' });
        const handed = waiter.locks.acquire(key, { ttl: TTL, autoRenew: false, waitTimeout: 10_000 });
        await expect.poll(() => redis.llen(`lock:{${key}}:queue`)).toBe(1);
        // Its attempt after it subscribed is in too (then it sleeps until a message wakes it): the
        // lock comes to it by the release's grant, not by an attempt of its own.
        const attempts = () => watch.seen.filter(({ args }) => args[0]!.toLowerCase() === 'evalsha' && args.at(-2) === String(TTL) && /^\d+:\d+:\d:1$/.test(args.at(-1)!));
        await expect.poll(() => attempts().length).toBeGreaterThanOrEqual(2);
        await held.release();
        const lock = await handed;
        const token = (lock as unknown as { token: string }).token;
        // The first renewal: the call naming the lock and the owner token, then the lease it sets.
        const renewals = () => watch.seen.filter(({ args }) => args.at(-2) === token && /^\d+$/.test(args.at(-1)!));
        await expect.poll(() => renewals().length).toBeGreaterThan(0);
        // Before: 3000, the whole ttl, a third of a second after the lease had started (an EVAL
        // after a NOSCRIPT names the same lease).
        for (const { args } of renewals()) expect(Number(args.at(-1))).toBeLessThan(TTL);
        await lock.release();
      } finally {
        redis.disconnect();
        await watch.stop();
      }
    });
  });
});
