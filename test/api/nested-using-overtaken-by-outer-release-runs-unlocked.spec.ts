/**
 * Found by review (forty-sixth session). A nested `using()` of a key its chain holds is handed a
 * re-entry of the outer lock, and runs `fn` after an `await`. One started from a microtask of the
 * outer call's last step (a `then` of a promise the outer code made, not awaited) got its
 * re-entry while the outer lock was still held, and ran `fn` once the outer call had released
 * it: `fn` ran with no lock at all, its handle `held: false`, `current()` naming nothing, while
 * another caller could take the key. Nested work that outlives the outer lock takes the key
 * afresh (docs/locks.md, "Reentrancy"): so does this call.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

interface Ran {
  held: boolean;
  current: boolean;
  token: number | undefined;
}

describe('a nested using() whose re-entry the outer call released before fn ran', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('runs fn under the key taken afresh', async () => {
    const { locks } = await app();
    let nested: Promise<Ran> | undefined;
    let outerToken: number | undefined;
    await locks.using('order:1', async (outer) => {
      outerToken = outer.fencingToken;
      // Not awaited: the nested call starts from a microtask of the outer fn's last step.
      void Promise.resolve().then(() => {
        nested = locks.using('order:1', (lock: Lock) => ({ held: lock.held, current: locks.current('order:1') !== undefined, token: lock.fencingToken }));
      });
    });
    const ran = await nested!;
    expect(ran).toEqual({ held: true, current: true, token: expect.any(Number) });
    expect(ran.token).toBeGreaterThan(outerToken!);
    // Released at its end: nothing is left in Redis.
    expect(await redis.exists('lock:{order:1}')).toBe(0);
  });
});
