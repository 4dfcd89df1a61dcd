import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { Lock, LockService } from '../../lib/index.js';
import { sleep, useLockApps } from '../support/lock-app.js';
import { subscribers, useRedis } from '../support/redis.js';

type Store = { acquire: (...args: unknown[]) => Promise<unknown>; renew: (...args: unknown[]) => Promise<unknown> };
const storeOf = (locks: LockService): Store => (locks as unknown as Record<symbol, { store: Store }>)[LOCK_RUNNER as symbol]!.store;

/**
 * Each acquire attempt of `locks` runs in Redis at once and is answered `lateBy` ms later; once,
 * right on such an answer, `then()` runs (a release that hands the waiter the lock).
 */
function answerAttemptsLate(locks: LockService, lateBy: number, then: () => void): void {
  const store = storeOf(locks);
  const original = store.acquire;
  let once: (() => void) | undefined = then;
  store.acquire = function (this: unknown, ...args: unknown[]) {
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
 * Found by review (forty-fourth session), after 8ab9e79. A release hands the head of the queue
 * the lock on a 1 s grant lease, which the waiter counts from its last attempt. A waiter whose
 * last attempt was answered late (650 ms here) has less than half of it left when the grant
 * comes, and renews before it is handed the lock. When that renewal was not answered within the
 * lease left, the waiter gave the grant back and went on under a new token: the lock went to the
 * waiter behind it, and it was queued again behind that one, though it had kept its place and
 * the grant (renewed in Redis) still stood: 8ab9e79's defect, by the renewal's path. It now tries
 * again under the same token, as 8ab9e79's waiter does, which takes the lock if the grant stands;
 * no code runs under the grant before an answer of Redis confirms it.
 */
describe('a waiter granted the lock late whose renewal before the handover is not answered', () => {
  const redis = useRedis();
  const app = useLockApps();

  const queued = async (length: number): Promise<void> => {
    while ((await redis.llen('lock:{late-renewal}:queue')) < length) await sleep(10);
  };

  it('keeps its place: it takes the lock before the waiter that queued behind it', async () => {
    const firstApp = await app();
    const holderApp = await app();
    const secondApp = await app();
    const held: Lock = await holderApp.locks.acquire('late-renewal', { ttl: 30_000 });
    const order: string[] = [];
    const served = (name: string) => async (lock: Lock) => {
      order.push(name);
      await lock.release();
    };
    const first = firstApp.locks.acquire('late-renewal', { ttl: 30_000, waitTimeout: 30_000 }).then(served('first'));
    await queued(1);
    const second = secondApp.locks.acquire('late-renewal', { ttl: 30_000, waitTimeout: 30_000 }).then(served('second'));
    await queued(2);
    await expect.poll(() => subscribers(redis, 'lock:{late-renewal}:released'), { timeout: 10_000 }).toBe(2);
    const renewals = holdRenewalReplies(firstApp.locks);
    // The first waiter's next attempt (a refresh) is answered 650 ms after it was sent; the
    // holder releases right then, handing it the lock with 350 ms of the grant lease left.
    answerAttemptsLate(firstApp.locks, 650, () => void held.release());
    await expect.poll(() => renewals.sent(), { timeout: 10_000 }).toBeGreaterThan(0);
    // Never answered in time: the lease left runs out.
    await Promise.race([first, second]);
    renewals.deliver();
    await Promise.all([first, second]);
    // Failed: ['second', 'first'].
    expect(order).toEqual(['first', 'second']);
  }, 30_000);
});
