import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { Lock, LockService } from '../../lib/index.js';
import { sleep, useLockApps } from '../support/lock-app.js';
import { subscribers, useRedis } from '../support/redis.js';

type Call = (...args: unknown[]) => Promise<unknown>;
type Store = { acquire: Call; renew: Call; semaphores: { acquire: Call }; readers: { acquire: Call } };
const storeOf = (locks: LockService): Store => (locks as unknown as Record<symbol, { store: Store }>)[LOCK_RUNNER as symbol]!.store;

/**
 * Each acquire attempt made through `attempts` (a store, or its part for one kind of lock) runs
 * in Redis at once and is answered `lateBy` ms later; once, right on such an answer, `then()`
 * runs (a release that hands the waiter the lock).
 */
function answerAttemptsLate(attempts: { acquire: Call }, lateBy: number, then: () => void): void {
  const original = attempts.acquire;
  let once: (() => void) | undefined = then;
  attempts.acquire = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    return new Promise((resolve) =>
      setTimeout(() => {
        resolve(reply);
        const run = once;
        once = undefined;
        run?.();
      }, lateBy),
    );
  };
}

/** Every renewal of `locks` runs in Redis, its answer held until `deliver()`. */
function holdRenewalReplies(locks: LockService): { sent(): number; deliver(): void } {
  const store = storeOf(locks);
  const original = store.renew;
  const held: (() => void)[] = [];
  store.renew = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    return new Promise((resolve) => held.push(() => resolve(reply)));
  };
  return { sent: () => held.length, deliver: () => held.splice(0).forEach((deliver) => deliver()) };
}

/**
 * What is taken, by whom: the first waiter's options, the second's (a writer behind a reader),
 * the holder's, the store part the first waiter's attempts go through, and the suffixes of the
 * queue and the release channel.
 */
const KINDS = {
  mutex: { first: {}, second: {}, holder: {}, attempts: (store: Store) => store, queue: ':queue', channel: ':released' },
  // A permit granted late (review suspicion, forty-fifth session, cleared).
  semaphore: { first: { limit: 1 }, second: { limit: 1 }, holder: { limit: 1 }, attempts: (store: Store) => store.semaphores, queue: ':sq', channel: ':sr' },
  // A reader let in by a writer's release, a writer behind it (the same suspicion, cleared).
  reader: { first: { mode: 'read' }, second: {}, holder: {}, attempts: (store: Store) => store.readers, queue: ':queue', channel: ':released' },
} as const;

/**
 * Found by review (forty-fourth session), after 8ab9e79. A release hands the head of the queue
 * the lock on a 1 s grant lease, which the waiter counts from its last attempt. A waiter whose
 * last attempt was answered late (650 ms here) has less than half of it left when the grant
 * comes, and renews before it is handed the lock. When that renewal was not answered within the
 * lease left, the waiter gave the grant back and went on under a new token: the lock went to the
 * waiter behind it, and it was queued again behind that one, though it had kept its place and
 * the grant (renewed in Redis) still stood: 8ab9e79's defect, by the renewal's path. It now tries
 * again under the same token, as 8ab9e79's waiter does, which takes the lock if the grant stands;
 * no code runs under the grant before an answer of Redis confirms it.
 *
 * Semaphores and read locks take grants through the same code, their same-token attempt through
 * scripts of their own (a permit's or a reader's `mine()`): the forty-fifth session's review
 * found them keeping their place as well (each fails, ['second', 'first'], with the waiter made
 * to give the grant back again), and nothing but the fencing counter is left of the key after.
 */
describe('a waiter granted the lock late whose renewal before the handover is not answered', () => {
  const redis = useRedis();
  const app = useLockApps();

  for (const [kind, { first: firstOptions, second: secondOptions, holder: holderOptions, attempts, queue, channel }] of Object.entries(KINDS)) {
    it(`keeps its place: it takes the lock before the waiter that queued behind it (${kind})`, async () => {
      const key = `late-renewal-${kind}`;
      const queued = async (length: number): Promise<void> => {
        while ((await redis.llen(`lock:{${key}}${queue}`)) < length) await sleep(10);
      };
      const firstApp = await app();
      const holderApp = await app();
      const secondApp = await app();
      const wait = { ttl: 30_000, waitTimeout: 30_000 };
      const held: Lock = await holderApp.locks.acquire(key, { ttl: 30_000, ...holderOptions });
      const order: string[] = [];
      const served = (name: string) => async (lock: Lock) => {
        order.push(name);
        await lock.release();
      };
      const first = firstApp.locks.acquire(key, { ...wait, ...firstOptions }).then(served('first'));
      await queued(1);
      const second = secondApp.locks.acquire(key, { ...wait, ...secondOptions }).then(served('second'));
      await queued(2);
      await expect.poll(() => subscribers(redis, `lock:{${key}}${channel}`), { timeout: 10_000 }).toBe(2);
      const renewals = holdRenewalReplies(firstApp.locks);
      // The first waiter's next attempt (a refresh) is answered 650 ms after it was sent; the
      // holder releases right then, handing it the lock with 350 ms of the grant lease left.
      answerAttemptsLate(attempts(storeOf(firstApp.locks)), 650, () => void held.release());
      await expect.poll(() => renewals.sent(), { timeout: 10_000 }).toBeGreaterThan(0);
      // Never answered in time: the lease left runs out.
      await Promise.race([first, second]);
      renewals.deliver();
      await Promise.all([first, second]);
      // Failed: ['second', 'first'].
      expect(order).toEqual(['first', 'second']);
      // The grant forgotten here left nothing behind it in Redis.
      expect(await redis.keys(`lock:{${key}}*`)).toEqual([`lock:{${key}}:fence`]);
    }, 30_000);
  }
});
