import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing): a data key spelled like a fence hash (`{<tag>}:fence`) is accepted by
 * `FencedRedis`, and on Redis its write goes into the hash that keeps the fencing tokens of every
 * key of that tag.
 *
 * Promise: docs/fencing.md: "`FencedRedis` writes a string or hash fields with one script that
 * refuses a token lower than the one kept", tokens live in "a field named after the key in the
 * hash `{<tag>}:fence`", and keys that cannot have their token kept safely are refused ("A key
 * with a `}` but no hash tag is refused"). TSDoc of `fenceHashOf` (lib/fencing/fence-key.ts):
 * "@throws TypeError for a key that cannot have its fence in its own slot".
 *
 * What happens: `fenceHashOf('{acct}:fence')` (lib/fencing/fence-key.ts:18-21, 29) answers
 * `{acct}:fence`, the key itself, so FENCED_HSET / FENCED_SET (lib/fencing/fenced-lua.ts) write
 * the caller's data into the token hash:
 * - `hset('{acct}:fence', 'balance:{acct}', '0', 1)` overwrites the token of `balance:{acct}`
 *   (5) with 0, and a stale holder's write with token 2 is then accepted over the newer data;
 * - `set('{t}:fence', ..., 1)` replaces the token hash with a string, then its own `HSET` of the
 *   token fails with WRONGTYPE: a half-done write (the data is there, the error says it failed),
 *   every token of the tag is gone, and every later fenced write to a key of that tag fails.
 * In memory (`MemoryFencedStore`) data and tokens are separate maps, so the same calls behave
 * differently there (and `fence()` then reads the data hash: it answers 0 for `balance:{acct}`).
 */
function behaviour(open: () => { fenced: FencedRedis }): void {
  it('a write to "{acct}:fence" cannot lower the token of "balance:{acct}": a stale holder stays refused', async () => {
    const { fenced } = open();
    await fenced.set('balance:{acct}', '100', 5);
    // Refusing the key (a TypeError) or writing it elsewhere are both fine; lowering the token is not.
    await fenced.hset('{acct}:fence', 'balance:{acct}', '0', 1).catch(() => undefined);
    expect(await fenced.fence('balance:{acct}')).toBe(5);
    await expect(fenced.set('balance:{acct}', 'stale', 2)).rejects.toBeInstanceOf(FencedWriteRefusedError);
    expect(await fenced.get('balance:{acct}')).toBe('100');
  });

  it('a write to "{t}:fence" leaves the tokens of the tag intact: later fenced writes of "x:{t}" still work and still check', async () => {
    const { fenced } = open();
    await fenced.set('x:{t}', 'a', 5);
    await fenced.set('{t}:fence', 'oops', 1).catch(() => undefined);
    expect(await fenced.fence('x:{t}')).toBe(5);
    await expect(fenced.set('x:{t}', 'stale', 4)).rejects.toBeInstanceOf(FencedWriteRefusedError);
    await fenced.set('x:{t}', 'b', 6);
    expect(await fenced.get('x:{t}')).toBe('b');
  });
}

describe('a data key spelled like its own fence hash', () => {
  describe('on Redis', () => {
    const redis = useRedis();
    behaviour(() => ({ fenced: new FencedRedis(redis) }));
  });

  describe('in memory', () => {
    behaviour(() => ({ fenced: new FencedRedis(new InMemoryLocks()) }));
  });
});
