/**
 * Found by review (forty-third session). `InvalidLockOptionsError` described every value that was
 * not a string, number, boolean, BigInt, null, undefined, function or array as "an object": a
 * `mode` given as a Symbol (`mode: Symbol('read')`), a `ttl` given as a Date (a deadline where a
 * duration belongs), a Map or a Set were all refused with "got an object", which names neither
 * the value nor the mistake. The message now says what the value is, and text taken from it (a
 * symbol's description, a class's name) is escaped and cut as a string value is.
 */
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';

describe.each(['redis', 'memory'] as const)('an option value that is no plain object (%s store)', (label) => {
  useRedis();
  const store = useBothStores().find((backend) => backend.label === label)!;

  it.each([
    ['mode', Symbol('read'), /got a symbol \(Symbol\("read"\)\)\.$/],
    ['mode', Symbol(), /got a symbol \(Symbol\(\)\)\.$/],
    ['ttl', new Date(0), /got a Date\.$/],
    ['ttl', new Map([['ms', 5000]]), /got a Map\.$/],
    ['waitTimeout', new Set([1000]), /got a Set\.$/],
    ['waitTimeout', new (class Deadline {})(), /got a Deadline\.$/],
  ] as const)('%s: %s is refused saying what it is', async (option, value, shown) => {
    const { locks } = await store.open();
    const refused = locks.acquire('kind:k', { [option]: value } as object);
    await expect(refused).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(refused).rejects.toThrow(shown);
    expect(await locks.isLocked('kind:k')).toBe(false);
  });

  it("escapes and cuts a symbol's description and a class's name", async () => {
    const { locks } = await store.open();
    const symbol = locks.acquire('kind:s', { mode: Symbol(`read\n[ERROR] forged\u202e${'x'.repeat(500)}`) as unknown as 'read' });
    await expect(symbol).rejects.toThrow(/got a symbol \(Symbol\("read\\n\[ERROR\] forged\\u202ex+…"\)\)\.$/);
    const message = (await symbol.catch((error: Error) => error.message)) as string;
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(400);
    const Hostile = class {};
    Object.defineProperty(Hostile, 'name', { value: `Evil\n[ERROR] forged${'y'.repeat(500)}` });
    const instance = locks.acquire('kind:c', { ttl: new Hostile() as unknown as number });
    await expect(instance).rejects.toThrow(/got an instance of "Evil\\n\[ERROR\] forgedy+…"\.$/);
    expect(((await instance.catch((error: Error) => error.message)) as string).length).toBeLessThan(400);
  });
});
