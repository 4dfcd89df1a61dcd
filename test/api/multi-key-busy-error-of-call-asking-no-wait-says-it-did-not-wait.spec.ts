import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { nextEvent, useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

type Acquire = (names: { lock: string }, ...args: unknown[]) => Promise<unknown>;

/**
 * Holds back the reply of `locks`' next attempt on `lockKey` until `deliver()`: the attempt runs
 * in Redis, its caller has no answer yet.
 */
function holdNextAttemptReply(locks: object, lockKey: string): { deliver(): void; held: Promise<void> } {
  const store = (locks as Record<symbol, { store: { acquire: Acquire } }>)[LOCK_RUNNER as symbol]!.store;
  const original = store.acquire;
  let deliver = (): void => undefined;
  let seen = (): void => undefined;
  const held = new Promise<void>((resolve) => (seen = resolve));
  store.acquire = function (this: unknown, names, ...args) {
    if (names.lock !== lockKey) return original.call(this, names, ...args);
    delete (store as Partial<typeof store>).acquire;
    const reply = original.call(this, names, ...args);
    seen();
    return new Promise((resolve) => (deliver = () => resolve(reply)));
  };
  return { deliver: () => deliver(), held };
}

/**
 * Found by review (forty-fourth session), after 1ead7a1 (the single-key busy error of a call with
 * `waitTimeout: 0` says the call did not wait). A multi-key call with `waitTimeout: 0` whose first
 * key was lost (taken by another holder) while its attempt on the second was on its way was
 * refused as `Lock "nw:a" was not acquired within 96 ms: another holder kept it`
 * (lib/core/multi-key/acquire-all.ts built that error without the call's waitTimeout): a wait
 * the caller had not asked for. It now says what the single-key error says.
 */
describe('the busy error of a multi-key call that asked not to wait, its first key lost meanwhile', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('says the call did not wait (waitTimeout 0), naming no wait in ms', async () => {
    const { locks } = await app({ ttl: 600, renewInterval: 100 });
    const attemptOnB = holdNextAttemptReply(locks, 'lock:{nw:b}');
    const lostA = nextEvent(locks.events$, 'lost');
    const call = locks.acquire(['nw:a', 'nw:b'], { waitTimeout: 0 }).catch((e: unknown) => e);
    await attemptOnB.held;
    // nw:a is taken and renewed; while the attempt on nw:b is on its way, another holder takes nw:a.
    await redis.set('lock:{nw:a}', 'someone-else', 'PX', 10_000);
    expect((await lostA).key).toBe('nw:a');
    attemptOnB.deliver();
    const error = await call;
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toBe(
      'Lock "nw:a" was not acquired: another holder kept it, and the call did not wait (waitTimeout 0). ' +
        'Raise waitTimeout to wait for it, or handle LockNotAcquiredError as "busy".',
    );
    expect(await redis.get('lock:{nw:b}')).toBeNull();
  });
});
