import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';

/**
 * Found by review: FencedRedis describes a `null` argument as "object" (`typeof null`), and
 * an `hset()` given a `Map` of fields as "an empty object". A `null` value is what a nullable
 * database column hands over (`fenced.set(key, row.note, token)`); the constructor and `hset()`'s
 * field check of the same class say "null". docs/guarantees.md ("bad input"): each fails "with a
 * message naming what was wrong".
 */
const attempt = (call: () => Promise<unknown>) =>
  call().then(
    () => undefined,
    (e: unknown) => e as Error,
  );

describe('FencedRedis bad arguments', () => {
  const fenced = new FencedRedis(new InMemoryLocks());

  it.each([
    ['set(null key)', () => fenced.set(null as never, 'v', 1)],
    ['set(null value)', () => fenced.set('k', null as never, 1)],
    ['set(null fencingToken)', () => fenced.set('k', 'v', null as never)],
    ['hget(null field)', () => fenced.hget('k', null as never)],
    ['hset({ a: null })', () => fenced.hset('k', { a: null as never }, 1)],
    ['get(key, null fencingToken)', () => fenced.get('k', null as never)],
  ])('%s says null, not "object"', async (_, call) => {
    const error = await attempt(call);
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toMatch(/got null\.?$/);
  });

  it('hset(key, new Map(...), token) is not called "an empty object"', async () => {
    const error = await attempt(() => fenced.hset('k', new Map([['balance', '1']]) as never, 1));
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).not.toContain('empty object');
    expect(error!.message).toMatch(/Map/);
  });

  // Found by review (forty-third session): a value of a class whose name was set at runtime (a
  // factory's class, a computed name) was named with that name raw, so a newline in it forged a
  // log line and 3,000 characters of it went into the message whole.
  it('names an instance of a class with a hostile name escaped and cut', async () => {
    class Payload {}
    Object.defineProperty(Payload, 'name', { value: `Payload\nERROR [RedisLock] forged\u202e${'x'.repeat(3_000)}` });
    const error = await attempt(() => fenced.set('k', new Payload() as never, 1));
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toContain('an instance of "Payload');
    expect(error!.message).not.toMatch(/[\n\u202e]/);
    expect(error!.message.length).toBeLessThan(400);
  });
});
