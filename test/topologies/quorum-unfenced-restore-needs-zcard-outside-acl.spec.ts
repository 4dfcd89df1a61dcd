import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';
import { LOCK_ACL } from '../support/least-privilege-acl.js';

/**
 * Found by review (fixed): docs/deployment.md "Least-privilege Redis user" lists the commands the library needs;
 * `+zcard` is named only for `inspect()` and the lock board. But in quorum mode a renewal that
 * puts a `fencing: false` holder's lock back on a node that restarted empty reads the other
 * nodes' counters through `LockScripts.inspect` (GET, PTTL, GET, ZCARD in one pipeline), which
 * that user may not run: every read fails (NOPERM on ZCARD), the floor is taken as 0, and the
 * restored node's fencing counter is not put back (test/scale/quorum-unfenced-restore.spec.ts's
 * promise, broken for the documented user). The same read guards the NOSCRIPT-resent grant
 * (`giveBackIfReleased`), which then gives back a grant the holder still holds elsewhere.
 */
const ACL = [...LOCK_ACL, ...(process.env.EXTRA_ACL?.split(' ') ?? [])];
const USER = 'quorum-locks';

describe('quorum mode as the documented least-privilege user: a restored node gets its counter back', () => {
  const { servers, app, get, until } = useQuorumNodes();
  const addUser = async (i: number) => {
    const node = new Redis(servers[i]!.url);
    await node.acl('SETUSER', USER, 'reset', ...ACL);
    node.disconnect();
  };
  const userUrl = (i: number) => {
    const url = new URL(servers[i]!.url);
    url.username = USER;
    url.password = 'lock-secret';
    return url.toString();
  };

  it('puts the highest counter back on a node restarted empty under a `fencing: false` holder', { timeout: 60_000 }, async () => {
    for (const i of [0, 1, 2]) await addUser(i);
    const { locks, logs } = await app({ ttl: 1_000, renewInterval: 150 }, [0, 1, 2].map(userUrl));
    const key = 'acl-q:unfenced';
    let before = 0;
    for (let i = 0; i < 3; i++) {
      const lock = await locks.acquire(key);
      before = Math.max(before, lock.fencingToken);
      await lock.release();
    }
    const held = await locks.acquire(key, { fencing: false });
    const owner = await get(2, `lock:{${key}}`);
    await servers[0]!.stop({ kill: true });
    await servers[0]!.start(); // empty: no persistence, and no ACL user until it is made again
    await addUser(0);
    // Put back by a renewal of the holder (SET NX on the node that answered "gone").
    expect(await until(() => get(0, `lock:{${key}}`), (v) => v === owner, 10_000)).toBe(owner);
    // ...with its counter: the highest the other nodes kept (a few renewals later at most).
    const restored = await until(() => get(0, `lock:{${key}}:fence`), (v) => v === String(before), 3_000);
    expect(held.held).toBe(true);
    await held.release();
    expect({ restored, errors: logs.lines.filter((line) => /NOPERM|zcard/i.test(line.message)).map((line) => line.message) }).toEqual({ restored: String(before), errors: [] });
  });
});
