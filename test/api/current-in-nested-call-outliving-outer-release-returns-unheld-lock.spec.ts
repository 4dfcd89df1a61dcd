/**
 * Found by review (forty-first session). A nested `using()` (or `@Locked` call) of a key its
 * chain holds re-enters the outer lock. When it outlives the outer call (started without being
 * awaited, or the outer lock released by hand meanwhile), the lock is given back in Redis while
 * the nested work goes on: `current(key)` still returned the nested handle, with `held` false
 * and a signal never aborted (a release aborts none), so `if (locks.current(key))` told that work
 * it ran inside the lock, while a `using(key)` it made took the key afresh in Redis beside it.
 * `current()` now says what it says of code that outlives its own call's release: undefined.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/** What current() returned, printable (a lock holds its connection's whole state). */
const shown = (lock: Lock | undefined): string => (lock === undefined ? 'none' : `a lock, held ${lock.held}`);

describe.each(['redis', 'memory'] as const)('current() in a nested call that outlives the outer lock (%s store)', (label) => {
  useRedis();
  const store = useBothStores().find((backend) => backend.label === label)!;

  it('is undefined once the outer using() ended and released the lock', async () => {
    const { locks } = await store.open();
    let nestedEnded!: Promise<unknown>;
    let outerReleased!: () => void;
    const released = new Promise<void>((resolve) => (outerReleased = resolve));
    await locks.using('nested:k', () => {
      // Not awaited: a fire-and-forget call of another locked method of the same key.
      nestedEnded = locks.using('nested:k', async (nested) => {
        await released;
        return { current: shown(locks.current('nested:k')), innermost: shown(locks.current()), held: nested.held };
      });
    });
    expect(await locks.isLocked('nested:k')).toBe(false);
    outerReleased();
    expect(await nestedEnded).toEqual({ current: 'none', innermost: 'none', held: false });
  });

  it('is undefined once the outer lock was released by hand, and a using() there takes the key afresh', async () => {
    const { locks } = await store.open();
    await locks.using('nested:h', async (outer) => {
      await locks.using('nested:h', async () => {
        await outer.release();
        expect(shown(locks.current('nested:h'))).toBe('none');
        expect(shown(locks.current())).toBe('none');
        await locks.using('nested:h', async (again) => {
          expect(again.fencingToken).toBeGreaterThan(outer.fencingToken);
          expect(locks.current('nested:h')).toBe(again);
          await sleep(1);
        });
      });
    });
    expect(await locks.isLocked('nested:h')).toBe(false);
  });

  it('is still the outer lock while the outer one holds (for contrast)', async () => {
    const { locks } = await store.open();
    await locks.using('nested:c', async (outer) => {
      await locks.using('nested:c', async (nested) => {
        expect(locks.current('nested:c')).toBe(nested);
        expect(nested.held).toBe(true);
      });
      expect(locks.current('nested:c')).toBe(outer);
    });
  });
});
