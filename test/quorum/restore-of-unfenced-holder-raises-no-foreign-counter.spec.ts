import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (foreign data at each quorum script's keys): a renewal that puts a `fencing:
 * false` holder's lock back on a master restarted empty raises that master's counter to the
 * highest counter the other masters keep (QuorumStore.unfencedFloors, read by
 * LockScripts.ownerAndCounter), and took each counter as `Number()` made it: a value written there
 * by something else, past 2^53 or a word, was the floor. The restored master was then written a
 * value the library never writes (9007199254740992 from 9007199254740993, 9223372036854776000 from
 * 2^63 - 2: every acquisition there refused from then on, one master more to clean by hand), or,
 * from a word (NaN), raised to nothing, the good counters beside it ignored. A counter no token
 * can be is left out, as a lost one is: the others' highest is the floor, and the foreign one is
 * left as it was (the next acquisition's error names it). So is one with a leading zero
 * (`0999999999999999`), which INCR refuses as it does a word and inspect() reports as foreign (91e6e1c7):
 * read as the number 999999999999999, it was the floor, above every token the counter handed out.
 */
describe('quorum: a restore for a `fencing: false` holder beside a foreign counter', () => {
  const { app, admin, get, until } = useQuorumNodes();

  it.each([['9223372036854775806'], ['9007199254740993'], ['not-a-counter'], ['hash'], ['0999999999999999']])(
    'a counter holding %s on another master: the restored one gets the good counter',
    { timeout: 30_000 },
    async (foreign) => {
      // A lease of 5 s, renewed every 150 ms: the restore comes with the next renewal, and a loaded
      // machine (load 21, a fresh-clone run beside four helpers) cannot lose the lock meanwhile
      // (with 1 s three of its four cases failed there, and passed on the quiet machine).
      const { locks } = await app({ ttl: 5_000, renewInterval: 150 });
      const key = `q:restore-foreign-${foreign}`;
      const fence = `lock:{${key}}:fence`;
      let before = 0;
      for (let i = 0; i < 2; i++) {
        const lock = await locks.acquire(key);
        before = Math.max(before, lock.fencingToken);
        await lock.release();
      }
      const held = await locks.acquire(key, { fencing: false });
      try {
        const owner = await get(2, `lock:{${key}}`);
        await admin(1, async (node) => void (foreign === 'hash' ? (await node.del(fence), await node.hset(fence, 'f', '1')) : await node.set(fence, foreign)));
        // Master 0 "restarted empty": it lost the lock and its counter.
        await admin(0, (node) => node.del(`lock:{${key}}`, fence));
        expect(await until(() => get(0, `lock:{${key}}`), (v) => v === owner, 10_000)).toBe(owner);
        const restored = await until(() => get(0, fence), (v) => v === String(before), 3_000);
        const left = foreign === 'hash' ? await admin(1, (node) => node.hget(fence, 'f')) : await get(1, fence);
        expect({ restored, left, held: held.held }).toEqual({ restored: String(before), left: foreign === 'hash' ? '1' : foreign, held: true });
      } finally {
        await held.release().catch(() => undefined);
      }
    },
  );
});
