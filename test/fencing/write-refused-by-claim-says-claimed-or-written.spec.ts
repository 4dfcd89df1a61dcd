import { describe, expect, it } from 'vitest';
import { FencedRedis, FencedWriteRefusedError } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { refusedWith } from '../support/refused-with.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (reads for update, 07d1ba0): a write refused because a newer holder only *claimed* the
 * key (a read for update, nothing written) is reported as if the newer holder had written it.
 *
 * What is wrong: since 07d1ba0 a resource's token is raised by a claiming read too
 * (`get(key, token)`, `hget(key, field, token)`, the SQL `UPDATE ... SET fence = $2 ... RETURNING`),
 * and the write path's refusal is the one this feature exists for: the paused holder's late write
 * refused by the next holder's *claim*, before that holder wrote anything (docs/fencing.md's second
 * timeline, t3). Yet `FencedWriteRefusedError`'s write message
 * (lib/errors/fenced-write-refused.error.ts:37-38) still says "A newer holder of the lock has
 * written it", and its TSDoc (lines 5-6) "the resource has already accepted a write with a higher
 * fencing token, so a newer holder of the lock has written it". In this case nothing was written
 * by anyone: the operator reading the log looks for a write that never happened. The read variant
 * of the same error was updated ("has claimed or written it"); the write variant was not.
 *
 * Correct behaviour: the write refusal states only what is known, that a higher token was claimed
 * or written ("A newer holder of the lock has claimed or written it"), as the read refusal does.
 * (Likewise `fence(key)`'s TSDoc, lib/fencing/fenced-redis.ts:165, "`null` before its first fenced
 * write", is no longer true: a claim alone sets it; asserted below as the observable half.)
 */
describe('a write refused by a newer holder\'s claim (nothing written by it)', () => {
  const redis = useRedis();

  it.each([
    ['Redis', () => new FencedRedis(redis)],
    ['memory', () => new FencedRedis(new InMemoryLocks())],
  ] as const)('on %s: the refusal does not claim that the newer holder wrote the key', async (_name, open) => {
    const fenced = open();
    const key = 'visits:{daily}';
    expect(await fenced.get(key, 5)).toBeNull(); // B (token 5) claims: reads, writes nothing
    expect(await redis.exists(key)).toBe(0);
    expect(await fenced.fence(key)).toBe(5); // the token is kept although no fenced write happened
    const refused = await refusedWith(fenced.set(key, 'late', 4), FencedWriteRefusedError); // A's late write
    expect(refused).toMatchObject({ key, fencingToken: 4, highestToken: 5, operation: 'write' });
    expect(refused.message).not.toContain('A newer holder of the lock has written it');
    expect(refused.message).toContain('claimed or written');
  });
});
