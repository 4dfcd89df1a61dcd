import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, NoFencingTokenError } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { Test } from '@nestjs/testing';

/**
 * Review (fencing): a multi-key lock's token looked up under a key the lock does not hold
 * (`lock.fencingTokens[dataKey]`, a typo, or the data key instead of the lock key) reaches
 * `FencedRedis` as `undefined`, and the refusal tells the caller that the lock was "taken with
 * fencing: false" and to "take the lock without that option", although it was taken with
 * fencing and has tokens.
 *
 * Promise: docs/fencing.md: "tokens of different keys are not comparable, `lock.fencingTokens[key]`
 * for a multi-key lock"; the library's bar for bad input: a message naming what was wrong.
 *
 * What happens: `checkToken` (lib/fencing/fenced-redis.ts:150-156) answers every `undefined`
 * with NoFencingTokenError '... got undefined: a lock taken with fencing: false has none; take
 * the lock without that option to write through FencedRedis.' `lock.fencingTokens` is a plain
 * record typed `Readonly<Record<string, number>>`, so the type checker does not catch the missing
 * key either (without noUncheckedIndexedAccess).
 */
describe('FencedRedis given lock.fencingTokens[k] for a key k the multi-key lock does not hold', () => {
  it('does not blame fencing: false, which the lock was not taken with', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({})] }).compile();
    await moduleRef.init();
    try {
      const locks = moduleRef.get(LockService);
      const fenced = moduleRef.get(FencedRedis);
      const error = await locks.using(['account:a', 'account:b'], (lock) =>
        fenced.set('balance:{account:c}', '1', lock.fencingTokens['account:c']!).then(
          () => undefined,
          (e: unknown) => e as Error,
        ),
      );
      expect(error).toBeInstanceOf(NoFencingTokenError);
      expect(error!.message).toMatch(/^FencedRedis\.set\(\): Argument "fencingToken"/);
      // Both causes of an undefined token are named, not only fencing: false.
      expect(error!.message).toContain('a key the lock does not hold');
    } finally {
      await moduleRef.close();
    }
  });
});
