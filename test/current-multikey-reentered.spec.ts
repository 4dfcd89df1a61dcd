import { describe, expect, it } from 'vitest';
import type { MultiKeyLock } from '../lib/index.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review: `using(keys, fn)` says that inside `fn` `current()` returns the multi-key lock
 * (its `keys`, its `fencingTokens`). When the call chain held every one of the keys already, each
 * part re-entered and nothing marked the multi-key call in the chain: `current()` returned the
 * innermost single-key lock of the outer calls, without `keys` or `fencingTokens`.
 */
describe('current() inside using(keys) whose keys the chain holds already', () => {
  useRedis();
  const app = useLockApps();

  it('is the multi-key lock when every key re-enters, and the outer lock again after it', async () => {
    const { locks } = await app();
    await locks.using('acct:a', (a) =>
      locks.using('acct:b', async (b) => {
        await locks.using(['acct:b', 'acct:a'], async (both) => {
          const current = locks.current() as MultiKeyLock;
          expect(current).toBe(both);
          expect(current.keys).toEqual(['acct:a', 'acct:b']);
          expect(current.fencingTokens).toEqual({ 'acct:a': a.fencingToken, 'acct:b': b.fencingToken });
          // One key still names its own lock.
          expect(locks.current('acct:a')?.fencingToken).toBe(a.fencingToken);
        });
        expect(locks.current()).toBe(b);
      }),
    );
  });

  it('is the multi-key lock when some keys re-enter', async () => {
    const { locks } = await app();
    await locks.using('acct:c', async (c) => {
      await locks.using(['acct:c', 'acct:d'], async (both) => {
        expect(locks.current()).toBe(both);
        expect((locks.current() as MultiKeyLock).keys).toEqual(['acct:c', 'acct:d']);
      });
      expect(locks.current()).toBe(c);
    });
  });

  it('is the inner single-key lock inside using(key) nested in using(keys)', async () => {
    const { locks } = await app();
    await locks.using(['acct:e', 'acct:f'], async (both) => {
      await locks.using('acct:g', async (g) => {
        expect(locks.current()).toBe(g);
      });
      await locks.using('acct:e', async (e) => {
        // Re-entered: current() is this call's own handle on its key, with that key's token.
        expect(locks.current()).toBe(e);
        expect(e.fencingToken).toBe(both.fencingTokens['acct:e']);
      });
      expect(locks.current()).toBe(both);
    });
  });
});
