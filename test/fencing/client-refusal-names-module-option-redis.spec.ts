import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing): `new FencedRedis(client)` for "data on another Redis" (docs/fencing.md) checks
 * its client only on the first write, with the lock module's checks and their wording: the error
 * names the module option "redis", which the caller never gave, or no method at all; and it
 * refuses an ioredis client with `stringNumbers: true`, which FencedRedis' scripts do not care
 * about (they answer a bulk string or nil, never an integer).
 *
 * Promise: the library's bar for bad input, "a clear error naming the method, option or
 * argument" (docs/guarantees.md: each fails "with its error class and a message naming what
 * was wrong"); `new FencedRedis()`'s own check names 'new FencedRedis(): Argument "source"'
 * (lib/fencing/fenced-redis.ts:45-46) for a non-object; docs/fencing.md: "make one with any of
 * those clients: `new FencedRedis(client)`".
 *
 * What happens: `FencedRedis.store()` (lib/fencing/fenced-redis.ts:140-146) builds
 * `new RedisFencedStore(client)` on the first call, whose `driverFor(client)` (default
 * option 'redis', lib/core/stores/redis/drivers/driver-for.ts:15) throws
 * - for a client with `stringNumbers: true`: InvalidLockOptionsError 'Option "redis" must be a
 *   client created without `stringNumbers: true`, which answers Redis integers as strings where
 *   the lock scripts answer integers (fencing tokens, reply codes) ...' (ioredis-driver.ts:37-43),
 *   a reason about lock scripts that does not apply to fenced writes;
 * - for an object that is no client: TypeError 'Not a Redis client: expected ...', naming neither
 *   FencedRedis nor its argument, from `fenced.set()`, not from the constructor.
 */
describe('new FencedRedis(client) with a client the lock module would refuse', () => {
  useRedis();
  const clients: Redis[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.disconnect();
  });

  it('an ioredis client with stringNumbers: true is refused when made, naming new FencedRedis() and its argument "source"', () => {
    const client = new Redis(redisUrl(), { stringNumbers: true, lazyConnect: true });
    clients.push(client);
    expect(() => new FencedRedis(client)).toThrow(TypeError);
    expect(() => new FencedRedis(client)).toThrow(/^new FencedRedis\(\): Argument "source" must be a client created without `stringNumbers: true`/);
  });

  it('an object that is no client is refused naming new FencedRedis() and its argument "source"', async () => {
    let error: unknown;
    try {
      await new FencedRedis({ host: 'localhost', port: 6379 } as never).set('report:{daily}', 'totals', 3);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/FencedRedis/);
    expect((error as Error).message).toContain('"source"');
  });
});
