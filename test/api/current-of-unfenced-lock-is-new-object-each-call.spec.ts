import { describe, expect, it } from 'vitest';
import { NoFencingTokenError, type Lock } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (forty-second session). `current()` returns the lock itself for a fenced lock, so
 * every call gives the same object. For a lock taken with `fencing: false` it returns a view whose
 * `fencingToken` throws (`current()` is typed `Lock`), and it made a new view on every call:
 * `current('k') === current('k')` was false, state kept for the lock in a WeakMap or Set (a
 * per-lock cache, "already logged" marks) was missed by the next call, and so was each method
 * (`current().release !== current().release`).
 */
describe.each(useBothStores())('current() of a lock taken with fencing: false ($label)', (backend) => {
  it('is the same object on every call, as a fenced lock is', async () => {
    const app = await backend.open();
    const fenced = await app.locks.using('current-fenced', () => sameEachCall(app.locks.current.bind(app.locks), 'current-fenced'));
    const unfenced = await app.locks.using('current-unfenced', () => sameEachCall(app.locks.current.bind(app.locks), 'current-unfenced'), { fencing: false });
    expect(unfenced).toEqual(fenced);
    expect(fenced).toEqual({ byKey: true, innermost: true, seen: true, release: true });
  });

  it('of a multi-key lock is the same object on every call, and its part too', async () => {
    const app = await backend.open();
    const same = await app.locks.using(['current-a', 'current-b'], () => sameEachCall(app.locks.current.bind(app.locks), 'current-b'), { fencing: false });
    expect(same).toEqual({ byKey: true, innermost: true, seen: true, release: true });
    await app.locks.using(['current-a', 'current-b'], () => {
      expect(app.locks.current()).toBe(app.locks.current());
    }, { fencing: false });
  });

  it('still refuses to hand out a fencing token', async () => {
    const app = await backend.open();
    await app.locks.using('current-unfenced-token', () => {
      const lock = app.locks.current('current-unfenced-token')!;
      expect(() => lock.fencingToken).toThrow(NoFencingTokenError);
      expect(lock.held).toBe(true);
    }, { fencing: false });
  });
});

/** Whether `current(key)` and `current()` give one object, which a WeakSet finds again. */
function sameEachCall(current: (key?: string) => Lock | undefined, key: string): Record<string, boolean> {
  const seen = new WeakSet<Lock>([current(key)!]);
  return {
    byKey: current(key) === current(key),
    innermost: current() === current(),
    seen: seen.has(current(key)!),
    release: current(key)!.release === current(key)!.release,
  };
}
