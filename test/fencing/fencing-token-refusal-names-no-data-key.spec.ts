import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FencedRedis, NoFencingTokenError } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { redisUrl } from '../support/redis.js';

/**
 * docs/fencing.md, "Redis: FencedRedis": a fencing token FencedRedis cannot use (`undefined`, the
 * token of a lock taken with `fencing: false`, or a key a multi-key lock does not hold; a number
 * that is no positive integer below 2^53) is refused with a message naming the data key of the
 * call, quoted and bounded as every key in a message is.
 *
 * Found by a defect hunt (session 49): the `NoFencingTokenError` and the `TypeError`s said
 * `FencedRedis.set(): Argument "fencingToken" must be a lock's fencing token ..., got 0` and
 * nothing of the key: a route that writes several keys, under several locks, logged a refusal
 * that did not say which write it was.
 */
describe('FencedRedis refusing a fencing token', () => {
  // Control characters that would forge a log line or move a terminal's cursor, a right-to-left
  // override, and 10 kB: shown escaped and cut.
  const key = `\u001b[2J\r\nERROR forged\u202e${'x'.repeat(10_000)}:{7}`;
  const shown = '"\\u001b[2J\\r\\nERROR forged\\u202exxx';
  const client = new Redis(redisUrl());
  afterAll(() => client.disconnect());
  const stores = { memory: () => new InMemoryLocks(), redis: () => client };

  const calls = {
    set: (fenced: FencedRedis, token: unknown) => fenced.set(key, 'v', token as number),
    'hset (a field)': (fenced: FencedRedis, token: unknown) => fenced.hset(key, 'balance', 1, token as number),
    'hset (fields)': (fenced: FencedRedis, token: unknown) => fenced.hset(key, { balance: 1 }, token as number),
    get: (fenced: FencedRedis, token: unknown) => fenced.get(key, token as number),
    hget: (fenced: FencedRedis, token: unknown) => fenced.hget(key, 'balance', token as number),
  };
  const tokens: [string, unknown, new (...args: never[]) => Error][] = [
    ['undefined', undefined, NoFencingTokenError],
    ['0', 0, TypeError],
    ['1.5', 1.5, TypeError],
    ['2^53', 2 ** 53, TypeError],
    ['a string', '5', TypeError],
    ['null', null, TypeError],
  ];

  describe.each(Object.keys(stores))('on %s', (store) => {
    it.each(Object.keys(calls))('%s names the data key, escaped and cut, for each bad token', async (method) => {
      const fenced = new FencedRedis(stores[store as keyof typeof stores]() as never);
      const call = calls[method as keyof typeof calls];
      const claim = method === 'get' || method === 'hget';
      for (const [what, token, Refusal] of tokens) {
        const error = await call(fenced, token).then(
          () => new Error('resolved'),
          (refused: unknown) => refused as Error,
        );
        expect(error, what).toBeInstanceOf(Refusal);
        // Failed: 'FencedRedis.set(): Argument "fencingToken" must be a lock's fencing token ...', no key.
        expect(error.message, what).toContain(`Argument "fencingToken" of the ${claim ? 'read for update of' : 'write to'} ${shown}`);
        expect(error.message, what).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
        expect(error.message.length, what).toBeLessThan(1_000);
      }
    });
  });
});
