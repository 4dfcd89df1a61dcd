import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * A review's suspicion, confirmed: `tryAcquire([...keys])` takes the keys one after another and
 * wrapped whatever it held in a `MultiLock` without looking at the earlier parts, where
 * `acquire([...keys])` gives everything back and tries again (multi-key-part-lost-while-waiting).
 * A part whose lease ran out while a later key was tried (Redis frozen or slow for longer than
 * the ttl) was handed out inside a lock whose `held` was false and whose `signal` had aborted.
 * Now the call gives everything back and rejects, as a single key's late reply does
 * (late-acquire-reply.spec.ts): not null, which says another holder has a key, where nobody has
 * (multi-key-tryacquire-part-lost-to-stall-says-busy.spec.ts).
 */
describe('tryAcquire() of several keys, with an earlier key lost while a later one is tried', () => {
  const own = useOwnRedis();

  it('rejects and leaves no key behind', async () => {
    const redis = own.redis();
    const app = await createLockApp({ redis: own.url(), ttl: 300, renewInterval: 100 });
    try {
      // Connected and its scripts loaded: only the later key's reply is late.
      await (await app.locks.acquire('warm-up')).release();
      let paused = false;
      const stallAfterFirst = app.locks.events$.subscribe((event) => {
        if (event.type !== 'acquired' || event.key !== 'acct:a' || paused) return;
        // The first key is in; this process stalls (a long GC pause, a blocked event loop) for
        // longer than its lease before it asks for the second.
        paused = true;
        const until = Date.now() + 450;
        while (Date.now() < until);
      });
      const outcome = await app.locks.tryAcquire(['acct:a', 'acct:b']).then(
        async (lock) => {
          if (lock === null) return null;
          const state = { held: lock.held, aborted: lock.signal.aborted };
          await lock.release().catch(() => undefined);
          return state;
        },
        (error: unknown) => (error as Error).message,
      );
      stallAfterFirst.unsubscribe();
      expect(paused).toBe(true);
      expect(outcome).toMatch(/ran out of its lease \(expired\) before the other keys were taken; every key was given back/);
      // Both parts given back (or run out): no lock of the call is left in Redis.
      await expect.poll(() => redis.exists('lock:{acct:a}', 'lock:{acct:b}')).toBe(0);
      const again = await app.locks.tryAcquire(['acct:a', 'acct:b']);
      expect(again?.held).toBe(true);
      await again?.release();
    } finally {
      await app.close();
    }
  });
});
