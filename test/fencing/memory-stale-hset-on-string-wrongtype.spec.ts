import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing): the in-memory fenced store checks the key's type before the token, Redis
 * checks the token first, so a stale holder's `hset` on a key a newer holder wrote as a string is
 * a FencedWriteRefusedError on Redis and a plain WRONGTYPE Error in memory.
 *
 * Promise: docs/fencing.md: the testing module provides a FencedRedis "in memory (the same rule,
 * for unit tests)"; TSDoc of MemoryFencedStore (lib/fencing/memory-fenced-store.ts): "the same
 * rule as the Redis scripts (refuse a token lower than the one kept ...)"; `hset` "@throws
 * FencedWriteRefusedError when `key` has accepted a higher token (nothing written)".
 *
 * What happens: FENCED_HSET (lib/fencing/fenced-lua.ts) runs CHECK first and answers the higher
 * token; `MemoryFencedStore.hset` (lib/fencing/memory-fenced-store.ts:24) rejects with WRONGTYPE
 * before it looks at the token. A service that catches FencedWriteRefusedError to step back
 * (as the docs' examples do) is told, in its unit tests, of a different error than production
 * gives it.
 */
describe('a stale hset on a key that a newer holder wrote as a string', () => {
  const redis = useRedis();

  it.each([
    ['Redis', () => new FencedRedis(redis)],
    ['memory', () => new FencedRedis(new InMemoryLocks())],
  ] as const)('is refused as stale (FencedWriteRefusedError, highestToken 5) on %s', async (_name, open) => {
    const fenced = open();
    await fenced.set('profile:{9}', 'compact form', 5);
    const error = await fenced.hset('profile:{9}', 'name', 'late', 4).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FencedWriteRefusedError);
    expect(error).toMatchObject({ key: 'profile:{9}', fencingToken: 4, highestToken: 5 });
    expect(await fenced.get('profile:{9}')).toBe('compact form');
  });
});
