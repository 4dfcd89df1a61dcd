/**
 * A lock a release hands to a waiter is held on a short grant lease (the waiter lease, 1 s,
 * counted from the waiter's last answered attempt). When the grant reaches the waiter late in
 * that lease (past half of it: a slow network, a busy event loop), Acquisition.takeGrant renews
 * the lock before handing it out, and gives it back if the renewal fails. Listeners of
 * `events$` (metrics, an audit log, OpenTelemetry) must hear of that lock only once it is
 * handed out: its `acquired` first; nothing at all for a lock given back before.
 *
 * The slow path, made without a Redis mock or a timing assertion: a proxy holds Redis's answers
 * to the waiter's application from the moment its next attempt goes out (the attempt runs in
 * Redis, busy, and its reply waits), a release hands the lock over in Redis, and the proxy lets
 * the reply and the grant through more than half a grant lease after that attempt started.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockEvent, Lock } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { freePort } from '../../scripts/redis-server.mjs';
import { createLockApp, sleep } from '../support/lock-app.js';
import { subscribers, useOwnRedis } from '../support/redis.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;

describe('a waiter handed the lock late in its grant lease', () => {
  const own = useOwnRedis();

  /**
   * Runs the slow path on key `job`; `beforeGrant` runs once the lock is handed over in Redis,
   * before its grant reaches the waiter. `then` gets the waiter's acquire and its events.
   */
  async function lateGrant(beforeGrant: (admin: Redis) => Promise<void>, then: (acquired: Promise<Lock>, events: LockEvent[]) => Promise<void>): Promise<void> {
    const admin = own.redis();
    const proxy = await TcpProxy.start(Number(new URL(own.url()).port));
    const holder = await createLockApp({ redis: own.url(), ttl: '30s' });
    const app = await createLockApp({ redis: proxy.url });
    const events: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => {
      if (event.key === 'job') events.push(event);
    });
    try {
      const held = await holder.locks.acquire('job');
      const acquired = app.locks.acquire('job', { ttl: '3s', waitTimeout: '20s', fairness: 'fifo' });
      acquired.catch(() => undefined);
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
      await beforeGrant(admin);
      // Past half of the grant lease since the attempt started, the reply and the grant arrive.
      await sleep(Math.max(0, sentAt + 650 - Date.now()));
      proxy.flushReplies();
      await then(acquired, events);
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE');
      subscription.unsubscribe();
      proxy.flushReplies();
      await app.close();
      await holder.close();
      await proxy.close();
    }
  }

  it('emits acquired before the renewed of the lock it got', { timeout: 30_000 }, async () => {
    await lateGrant(
      async () => undefined,
      async (acquired, events) => {
        const lock = await acquired;
        // The waiter got the handed-over lock (the counter's second token: the holder had the first).
        expect(lock.fencingToken).toBe(Number(await own.redis().get('lock:{job}:fence')));
        // A renewal of it comes (on the slow path before acquire() resolved; else from the watchdog).
        await expect.poll(() => events.some((event) => event.type === 'renewed'), { timeout: 5_000 }).toBe(true);
        const told = events.filter((event) => event.type === 'acquired' || event.type === 'renewed');
        expect(told.slice(0, 2).map((event) => `${event.type} #${'fencingToken' in event ? event.fencingToken : ''}`)).toEqual([`acquired #${lock.fencingToken}`, `renewed #${lock.fencingToken}`]);
        await lock.release();
      },
    );
  });

  it('emits no released for the lock it gave back without handing it out (Redis refusing writes when the grant arrives)', { timeout: 30_000 }, async () => {
    await lateGrant(
      // A failover: Redis keeps its data and refuses writes (the renewal and the give-back).
      async (admin) => void (await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()))),
      async (acquired, events) => {
        // The slow path renews (refused), gives the lock back (refused), and goes on waiting.
        await expect.poll(() => events.length, { timeout: 5_000 }).toBeGreaterThan(0);
        await sleep(300);
        const seen = events.map((event) => `${event.type}${'fencingToken' in event ? ` #${event.fencingToken}` : ''}${'unconfirmed' in event && event.unconfirmed ? ' unconfirmed' : ''}`);
        // Whatever else: nothing said of lock #2 unless its acquired came first.
        const first = seen.findIndex((line) => line.includes('#2'));
        expect(first === -1 || seen[first]!.startsWith('acquired'), seen.join(', ')).toBe(true);
        await own.redis().call('REPLICAOF', 'NO', 'ONE');
        await acquired.then((lock) => lock.release(), () => undefined);
      },
    );
  });
});
