import { describe, expect, it } from 'vitest';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { Lock, LockService } from '../../lib/index.js';
import { closesWithin } from '../support/frozen-redis.js';
import { holdNextReleaseReply } from '../support/held-release-reply.js';
import { sleep, useLockApps } from '../support/lock-app.js';
import { subscribers, useRedis } from '../support/redis.js';

type Store = { acquire: (...args: unknown[]) => Promise<unknown>; renew: (...args: unknown[]) => Promise<unknown> };
const storeOf = (locks: LockService): Store => (locks as unknown as Record<symbol, { store: Store }>)[LOCK_RUNNER as symbol]!.store;

/** The next acquire attempt of `locks` runs in Redis at once and is answered `lateBy` ms later, `then()` running right on that answer. */
function answerNextAttemptLate(locks: LockService, lateBy: number, then: () => void): void {
  const store = storeOf(locks);
  const original = store.acquire;
  store.acquire = function (this: unknown, ...args: unknown[]) {
    store.acquire = original;
    const reply = original.apply(this, args);
    return new Promise((resolve) =>
      setTimeout(() => {
        resolve(reply);
        then();
      }, lateBy),
    );
  };
}

/** Every renewal of `locks` runs in Redis and is never answered; `onSent()` runs as the first goes out. */
function neverAnswerRenewals(locks: LockService, onSent: () => void): void {
  const store = storeOf(locks);
  const original = store.renew;
  let first: (() => void) | undefined = onSent;
  store.renew = function (this: unknown, ...args: unknown[]) {
    void original.apply(this, args).catch(() => undefined);
    const sent = first;
    first = undefined;
    queueMicrotask(() => sent?.());
    return new Promise(() => undefined);
  };
}

/**
 * Found by review (forty-fourth session) of d4674e3. A waiter handed the lock late in its grant
 * lease renews before the handover; a waiter whose signal aborts meanwhile gives the grant back.
 * When that release was not answered, the end of its lease did not settle it (as unanswered, sent
 * again later): `HeldLock.expire()` took every grant renewed before its handover and never handed
 * out for one whose renewal went unanswered, and forgot it without a word. The release stayed on
 * the application's clean-ups, and `app.close()` waited its whole `shutdownTimeout` for it.
 */
describe('a waiter aborted while its grant is renewed before the handover, whose release is not answered', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('has that release settled as unanswered by the end of its lease: app.close() does not wait for it', async () => {
    const waiterApp = await app({ shutdownTimeout: 60_000 });
    const holderApp = await app();
    const held: Lock = await holderApp.locks.acquire('aborted-renewal', { ttl: 30_000 });
    const controller = new AbortController();
    const waiting = waiterApp.locks.acquire('aborted-renewal', { ttl: 30_000, waitTimeout: 30_000, signal: controller.signal });
    void waiting.catch(() => undefined);
    while ((await redis.llen('lock:{aborted-renewal}:queue')) < 1) await sleep(10);
    await expect.poll(() => subscribers(redis, 'lock:{aborted-renewal}:released'), { timeout: 10_000 }).toBe(1);
    neverAnswerRenewals(waiterApp.locks, () => controller.abort(new Error('caller gave up')));
    const release = holdNextReleaseReply(waiterApp.locks);
    // The waiter's next attempt (a refresh) is answered 650 ms after it was sent; the holder
    // releases right then, handing it the lock with 350 ms of its grant lease left.
    answerNextAttemptLate(waiterApp.locks, 650, () => void held.release());
    await expect(waiting).rejects.toThrow('caller gave up');
    await expect.poll(() => release.held(), { timeout: 10_000 }).toBe(true);
    try {
      // Failed: app.close() still pending after 20 s (it waited for the release's reply).
      await closesWithin(waiterApp, 20_000);
    } finally {
      release.deliver();
    }
    // The release ran in Redis (only its reply was held): nothing is left of the lock.
    await expect.poll(() => redis.exists('lock:{aborted-renewal}'), { timeout: 10_000 }).toBe(0);
  }, 60_000);
});
