import { describe, expect, it } from 'vitest';
import { sleep, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review: code that a `using()` callback started and that runs after the call released
 * its lock (a timer, a promise nobody awaited) got that lock from `current()`, with `held`
 * false: `if (locks.current(key))` could not tell whether it ran inside the lock.
 */
describe('current() after using() released its lock', () => {
  useRedis();
  const app = useLockApps();

  it('is undefined for a single-key lock, and for the keys of a multi-key lock', async () => {
    const { locks } = await app();
    const late: Promise<unknown>[] = [];
    await locks.using('job:1', async (lock) => {
      expect(locks.current('job:1')).toBe(lock);
      late.push(sleep(50).then(() => [locks.current('job:1'), locks.current()]));
    });
    await locks.using(['acct:a', 'acct:b'], async () => {
      late.push(sleep(50).then(() => [locks.current('acct:a'), locks.current()]));
    });
    expect(await Promise.all(late)).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  it('is still the outer lock in code that outlives a nested call, while the outer one holds', async () => {
    const { locks } = await app();
    await locks.using('outer', async (outer) => {
      let seen: unknown;
      await locks.using('inner', async () => {
        void sleep(20).then(() => (seen = locks.current()));
      });
      await sleep(60);
      expect(seen).toBe(outer);
    });
  });
});
