import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing): `FencedRedis.hset(key, { field: value, ... }, token)` fails on Redis for a
 * hash of 4,000 fields or more.
 *
 * Promise: docs/fencing.md ("`hset(key, { field: value, ... }, fencingToken)`: HSET of one or
 * several fields, fenced per hash") and the TSDoc of `FencedRedis.hset` put no limit on the
 * number of fields, and the in-memory store of `nestjs-redis-lock/testing` ("the same rule")
 * writes any number of them.
 *
 * What happens: FENCED_HSET (lib/fencing/fenced-lua.ts:28) runs
 * `redis.call('HSET', KEYS[1], unpack(ARGV, 3))`; Lua's `unpack` cannot push more than about
 * 8,000 values onto the C stack (LUAI_MAXCSTACK), so from 4,000 fields (8,000 values) on the
 * script fails with "ERR ... too many results to unpack" (a raw ReplyError, not a
 * FencedWriteRefusedError or a TypeError), and nothing is written. The same call succeeds in
 * memory, so a unit test on `RedisLockTestingModule` passes and production fails.
 */
const manyFields = (count: number): Record<string, string> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`item:${i}`, String(i)]));

describe('FencedRedis.hset with many fields', () => {
  const redis = useRedis();

  it('writes a hash of 5,000 fields on Redis, as it does in memory', async () => {
    const fields = manyFields(5_000);

    const memory = new FencedRedis(new InMemoryLocks());
    await memory.hset('catalog:{7}', fields, 3);
    expect(await memory.hget('catalog:{7}', 'item:4999')).toBe('4999');

    const fenced = new FencedRedis(redis);
    await fenced.hset('catalog:{7}', fields, 3); // fails: ERR ... too many results to unpack
    expect(await redis.hlen('catalog:{7}')).toBe(5_000);
    expect(await redis.hget('catalog:{7}', 'item:4999')).toBe('4999');
    expect(await fenced.fence('catalog:{7}')).toBe(3);
  });
});
