import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { holdsForeignData } from '../../lib/core/engine/store-failure.js';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review of foreign data at the quorum scripts' keys (e00831aa). A quorum master's fencing
 * counter is raised by `nestjsRedisLockFenceFloor` (the write-back of a split vote's token, the
 * catch-up of the masters left behind, a restore, a raise owed to a silent master), which read it
 * with `tonumber()`: a word there (`abc`) failed the script with "attempt to compare nil with
 * number", naming neither the key nor the cause, and a write-back a majority failed so said
 * "Quorum not reached to write back the fencing token of the lock ... (node 1: ERR
 * user_script:3: attempt to compare nil with number ...)", where every other call a majority
 * refuses for data of another kind names both keys and the remedy; and a word `tonumber()` reads
 * but `INCR` refuses (`1e5`, ` 7`) was written over with the token, something else's data destroyed
 * where every other script leaves it as it was and says so. The raise now refuses, writing
 * nothing, what the acquire script's `INCR` refuses, with Redis' own words for it.
 */
describe('quorum: the fencing raise of a counter holding data this library did not write', () => {
  const { app, admin, get, servers, until } = useQuorumNodes();
  const raise = (value: string | Record<string, string>, floor = 1_800_000_000_000) =>
    admin(0, async (node) => {
      await node.del('lock:{raised}:fence');
      if (typeof value === 'string') await node.set('lock:{raised}:fence', value);
      else await node.hset('lock:{raised}:fence', value);
      return node.eval(COMMANDS.fenceFloor.lua, 1, 'lock:{raised}:fence', floor, '0').then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    });

  it.each([['abc'], ['1e5'], [' 7'], ['007']])('%s: refused as INCR refuses it, left as it was', async (value) => {
    const error = await raise(value);
    expect(error?.message).toMatch(/value is not an integer or out of range/);
    expect(holdsForeignData(error)).toBe(true);
    expect(await get(0, 'lock:{raised}:fence')).toBe(value);
  });

  it('a hash: WRONGTYPE, left as it was', async () => {
    expect((await raise({ f: '1' }))?.message).toMatch(/WRONGTYPE/);
    expect(await admin(0, (node) => node.hgetall('lock:{raised}:fence'))).toEqual({ f: '1' });
  });

  it.each([
    ['-5', '1800000000000'],
    ['0', '1800000000000'],
    ['1700000000000', '1800000000000'],
    ['1900000000000', '1900000000000'],
    ['9007199254740993', '9007199254740993'],
  ])('%s: raised to the floor, never lowered', async (value, after) => {
    expect(await raise(value)).toBeUndefined();
    expect(await get(0, 'lock:{raised}:fence')).toBe(after);
  });

  it('a write-back a majority refuses so names both keys and the remedy, and leaves no lock', { timeout: 60_000 }, async () => {
    const { locks } = await app({ ttl: 10_000 });
    // Counters above the clock on masters 0 and 1, none on master 2: three grants with three counters,
    // so the round waits for each, and the highest (master 0's) is written back to every master.
    // Master 0 answers once the word is on the other two, after their grants (were it late, the
    // other two's counters would still differ, and the write-back go to all three); a loaded machine
    // that wrote the words only after the write-back (granted then) asks again.
    const run = Date.now().toString(36);
    for (let attempt = 0; attempt < 10; attempt++) {
      // A key of each run's own: a retry would find the words the failed run left.
      const key = `q-raise-${run}-${attempt}`;
      await admin(0, (node) => node.set(`lock:{${key}}:fence`, '5000000000000'));
      await admin(1, (node) => node.set(`lock:{${key}}:fence`, '3000000000000'));
      servers[0]!.pause();
      let outcome: Promise<unknown>;
      try {
        outcome = locks.tryAcquire(key).then(
          (lock) => lock,
          (error: unknown) => error,
        );
        for (const i of [1, 2]) await until(() => get(i, `lock:{${key}}`), (owner) => owner !== null, 5_000);
        for (const i of [1, 2]) await admin(i, (node) => node.set(`lock:{${key}}:fence`, 'abc'));
      } finally {
        servers[0]!.resume();
      }
      const settled = await outcome;
      if (settled !== null && !(settled instanceof Error)) {
        // The words came after the write-back.
        await (settled as { release(): Promise<unknown> }).release();
        continue;
      }
      const error = settled as Error;
      expect(error.message).toMatch(new RegExp(`^Quorum not reached to write back the fencing token of the lock: 2 of 3 Redis nodes refused it for data this library did not write under its keys "lock:\\{${key}\\}" and "lock:\\{${key}\\}:fence"[\\s\\S]*delete that key on those masters, or give the module a keyPrefix of its own`));
      expect(error).toBeInstanceOf(RedisLockError);
      // Given back everywhere; the words as they were written.
      for (const i of [0, 1, 2]) await expect.poll(() => get(i, `lock:{${key}}`)).toBeNull();
      for (const i of [1, 2]) expect(await get(i, `lock:{${key}}:fence`)).toBe('abc');
      return;
    }
    throw new Error('master 0 never answered within the grant round');
  });
});
