import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';

/**
 * Review (fencing): `FencedRedis.hset(key, field, value, token)` with a field that is not a
 * string (a numeric id from JavaScript, or from an `any`) is refused with a TypeError that
 * blames the wrong argument: "fencingToken", whose value was fine.
 *
 * Promise: test/fencing-redis.spec.ts "refuses bad input with a TypeError naming the method and
 * the argument", and the module's bad-input guarantee (docs/guarantees.md: "each fails with its
 * error class and a message naming what was wrong").
 *
 * What happens: `hset` (lib/fencing/fenced-redis.ts:82-84) picks the overload by
 * `typeof fieldOrFields === 'string'`; a number field selects the object form, so the *value*
 * ('v') is taken as the token and `checkToken` reports 'Argument "fencingToken" must be a lock's
 * fencing token ..., got string' while the lock's valid token 7 sits in the fourth argument.
 */
describe('FencedRedis.hset with a field that is not a string', () => {
  it('names the field, not the fencing token, in its TypeError', async () => {
    const fenced = new FencedRedis(new InMemoryLocks());
    const error = await fenced.hset('account:{7}', 42 as never, 'v', 7).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toMatch(/^FencedRedis\.hset\(\): Argument "fields?"/);
    expect(error!.message).not.toContain('"fencingToken"');
    expect(await fenced.fence('account:{7}')).toBeNull();
  });
});
