/**
 * A review's suspicion: a lock a release hands to a waiter is held on a short grant lease
 * (the waiter lease, 1 s, counted from the waiter's last answered attempt). When the grant
 * reaches the waiter late in that lease (past half of it: a slow network, a busy event loop),
 * Acquisition.takeGrant takes the slow path: it renews the lock (HeldLock.renewNow, which emits
 * `renewed` from completeRenewal) and only then calls the manager's `acquired`, which emits
 * `acquired`. A subscriber to `events$` (metrics, an audit log, OpenTelemetry spans keyed on
 * `acquired`) then sees a renewal of a lock it was never told was acquired.
 *
 * The slow path, made without a Redis mock or a timing assertion: a proxy holds Redis's answers
 * to the waiter's application from the moment its next attempt goes out (the attempt runs in
 * Redis, busy, and its reply waits), a release hands the lock over in Redis, and the proxy lets
 * the reply and the grant through more than half a grant lease after that attempt started. That
 * the waiter got the handed-over lock (and not a later one after the grant lapsed) is checked by
 * its fencing token.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;

/** Waiters of `key` subscribed to its release messages (the grant goes to the subscriber). */
async function subscribers(admin: Redis, channel: string): Promise<number> {
  const reply = (await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

describe('a waiter handed the lock late in its grant lease', () => {
  const own = useOwnRedis();

  it('emits acquired before the renewed of the lock it got', { timeout: 30_000 }, async () => {
    const admin = own.redis();
    const proxy = await TcpProxy.start(Number(new URL(own.url()).port));
    const holder = await createLockApp({ redis: own.url(), ttl: '30s' });
    const app = await createLockApp({ redis: proxy.url });
    const events: Extract<LockEvent, { type: 'acquired' | 'renewed' }>[] = [];
    const subscription = app.locks.events$.subscribe((event) => {
      if (event.key === 'job' && (event.type === 'acquired' || event.type === 'renewed')) events.push(event);
    });
    try {
      const held = await holder.locks.acquire('job');
      const acquired = app.locks.acquire('job', { ttl: '3s', waitTimeout: '20s', fairness: 'fifo' });
      await expect.poll(() => admin.zcard('lock:{job}:waiters')).toBe(1);
      await expect.poll(() => subscribers(admin, 'lock:{job}:released')).toBeGreaterThanOrEqual(1);
      const [member] = await admin.zrange('lock:{job}:waiters', 0, -1);

      // The waiter's next attempt: Redis's answers to its application are held from now on.
      const manager = app.locks[LOCK_RUNNER] as unknown as { attempt: Attempt };
      const original = manager.attempt;
      const sent = new Promise<number>((resolve) => {
        manager.attempt = function (this: unknown, ...args: unknown[]) {
          proxy.holdReplies();
          resolve(Date.now());
          manager.attempt = original;
          return original.apply(this, args);
        };
      });
      const sentAt = await sent;
      // It ran in Redis (busy, its place refreshed: alive until its run plus the 1 s waiter lease).
      await expect.poll(async () => Number(await admin.zscore('lock:{job}:waiters', member!))).toBeGreaterThanOrEqual(sentAt + 1_000);
      // The release hands the lock to the waiter in Redis (grant lease: 1 s).
      await held.release();
      expect(await admin.get('lock:{job}')).toBe(member!.split(':')[0]);
      // Past half of the grant lease since the attempt started, the reply and the grant arrive.
      await sleep(Math.max(0, sentAt + 650 - Date.now()));
      proxy.flushReplies();
      const lock = await acquired;
      // The waiter got the handed-over lock (fencing token 2: the holder's was 1).
      expect(lock.fencingToken).toBe(2);
      // A renewal of it comes (on the slow path before acquire() resolved; else from the watchdog).
      await expect.poll(() => events.some((event) => event.type === 'renewed'), { timeout: 5_000 }).toBe(true);
      expect(events.slice(0, 2).map((event) => `${event.type} #${event.fencingToken}`)).toEqual(['acquired #2', 'renewed #2']);
      await lock.release();
    } finally {
      subscription.unsubscribe();
      proxy.flushReplies();
      await app.close();
      await holder.close();
      await proxy.close();
    }
  });
});
