import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * docs/redis-data.md: a fencing counter that INCR would take past 2^53 - 1 (inexact in a double,
 * as FencedRedis and the SQL fence columns compare tokens) was written by something else, and the
 * script that would hand out its next token ends with a FOREIGNFENCINGCOUNTER error, the counter
 * left as it was (b7696f17, one server). A quorum master's acquire script (QUORUM_ACQUIRE) left
 * that range out, as the seed raises a low or negative counter: with such a counter on a majority
 * of masters, tryAcquire() handed out the token 9007199254740994 (no safe integer), and from one
 * at 2^63 - 2 the token 0, which means "no token", for a lock taken with fencing.
 */
describe('quorum: a fencing counter past the tokens range on every master', () => {
  const { app, admin, get } = useQuorumNodes();

  it.each([['9007199254740991'], ['9007199254740993'], ['9223372036854775806']])('%s: refused at the first attempt, every counter left as it was, no lock left', { timeout: 30_000 }, async (value) => {
    const { locks } = await app({ ttl: 10_000 });
    for (const i of [0, 1, 2]) await admin(i, (node) => node.set('lock:{past}:fence', value, 'PX', 600_000));
    const outcome = await locks.tryAcquire('past').catch((error: unknown) => error as Error);
    if (!(outcome instanceof Error)) await outcome?.release();
    expect(outcome instanceof Error ? outcome.message : `granted with ${outcome?.fencingToken}`).toMatch(new RegExp(`FOREIGNFENCINGCOUNTER ${value}`));
    expect(outcome).toBeInstanceOf(RedisLockError);
    for (const i of [0, 1, 2]) {
      expect(await get(i, 'lock:{past}:fence')).toBe(value);
      expect(await admin(i, (node) => node.pttl('lock:{past}:fence'))).toBeGreaterThan(500_000);
      expect(await get(i, 'lock:{past}')).toBeNull();
    }
  });

  // A grant again to the owner token holding the lock there: its PEXPIRE could not be taken back.
  it('a master holding the lock for the caller leaves its lease and its counter as they were', async () => {
    await admin(0, (node) => node.set('lock:{again}', 'caller', 'PX', 60_000));
    await admin(0, (node) => node.set('lock:{again}:fence', '9007199254740993'));
    const reply = await admin(0, (node) => node.eval(COMMANDS.quorumAcquire.lua, 1, 'lock:{again}', 'caller', 600_000, '0', '1000')).catch((error: unknown) => error);
    expect(reply instanceof Error ? reply.message : `granted with ${String(reply)}`).toMatch(/FOREIGNFENCINGCOUNTER 9007199254740993/);
    expect(await get(0, 'lock:{again}:fence')).toBe('9007199254740993');
    expect(await admin(0, (node) => node.pttl('lock:{again}'))).toBeLessThanOrEqual(60_000);
  });
});
