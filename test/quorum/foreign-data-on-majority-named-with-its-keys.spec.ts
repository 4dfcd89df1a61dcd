import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (foreign data at each quorum script's keys): on one Redis a lock's key holding
 * data of another kind (a hash where its string is, a word where its counter is) fails the call with
 * a RedisLockError naming the lock and what to fix (delete the key, or a keyPrefix of the module's
 * own). In quorum mode a majority of masters refusing so failed it with "Quorum not reached ...
 * (node 0: WRONGTYPE Operation against a key holding the wrong kind of value ...)", naming no key
 * and no remedy: acquire, tryAcquire, isLocked, inspect and release alike. Nothing is written
 * before such a refusal (checked here too), and the call still ends at once.
 */
describe('quorum: data of another kind under a lock key on a majority of masters', () => {
  const { app, admin, get } = useQuorumNodes();
  const named = (key: string) => new RegExp(`"lock:\\{${key}\\}(:fence)?".*delete that key.*keyPrefix of its own`);
  const failure = (call: Promise<unknown>) => call.then((value) => new Error(`no failure: ${String(value)}`), (error: unknown) => error as Error);

  it.each([
    ['a hash at the lock', 'lock'],
    ['a word at the counter', 'fence'],
  ])('%s: acquire, tryAcquire, isLocked and inspect name the keys and the remedy', { timeout: 30_000 }, async (_, at) => {
    const { locks } = await app({ ttl: 5_000 });
    const key = `q-foreign-${at}`;
    const target = at === 'lock' ? `lock:{${key}}` : `lock:{${key}}:fence`;
    for (const i of [0, 1]) await admin(i, async (node) => void (at === 'lock' ? await node.hset(target, 'f', '1') : await node.set(target, 'word')));
    const calls = {
      tryAcquire: await failure(locks.tryAcquire(key)),
      acquire: await failure(locks.acquire(key, { waitTimeout: 20_000 })),
      inspect: await failure(locks.inspect(key)),
      ...(at === 'lock' ? { isLocked: await failure(locks.isLocked(key)) } : {}),
    };
    for (const [call, error] of Object.entries(calls)) {
      expect({ call, error: error.message }).toEqual({ call, error: expect.stringMatching(named(key)) });
      expect(error).toBeInstanceOf(RedisLockError);
    }
    // Nothing left behind by the refused attempts: no lock copy on any master (master 2's grant given
    // back), the foreign data as it was.
    for (const i of [0, 1, 2]) expect(await admin(i, (node) => node.type(`lock:{${key}}`))).toBe(at === 'lock' && i < 2 ? 'hash' : 'none');
    if (at === 'fence') for (const i of [0, 1]) expect(await get(i, target)).toBe('word');
  });

  it('release of a lock whose key became a hash on a majority names it', { timeout: 30_000 }, async () => {
    const { locks } = await app({ ttl: 5_000 });
    const key = 'q-foreign-release';
    const held = await locks.acquire(key);
    for (const i of [0, 1]) await admin(i, (node) => node.del(`lock:{${key}}`).then(() => node.hset(`lock:{${key}}`, 'f', '1')));
    const error = await failure(held.release());
    expect(error.message).toMatch(named(key));
    expect(error).toBeInstanceOf(RedisLockError);
  });
});
