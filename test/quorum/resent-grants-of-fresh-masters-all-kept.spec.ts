import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by CI (the board's quorum paging spec, twice, on fresh masters under load). A master that
 * lost its scripts answers an acquisition NOSCRIPT and takes it again as EVAL; such a grant was
 * given back unless another master said the token held the lock there. But on fresh masters
 * every acquisition is resent: master 0's grant landed first, and its check reached masters 1 and
 * 2 before their own resent acquisitions had run there, so both said "not the owner" and master
 * 0's copy was given back, from a lock its caller then held on two masters only (one failure from
 * losing it). Here masters 1 and 2 are busy for 100 ms while master 0 answers at once. A resent
 * grant is now given back only when this token's release (or leave) was already sent: then it is
 * surely not held; otherwise the release to come deletes it.
 */
describe('quorum: the first acquisition on three masters that have no scripts', () => {
  const quorum = useQuorumNodes();
  /** A connection of the test's own to each master, disconnected when the test ends (passed or failed). */
  const admins = (): Redis[] => {
    const nodes = quorum.servers.map((server) => new Redis(server.url));
    onTestFinished(() => nodes.forEach((node) => node.disconnect()));
    return nodes;
  };

  it('leaves the lock on every master', async () => {
    const app = await quorum.app({ ttl: 30_000 });
    const nodes = admins();
    await Promise.all(nodes.map((admin) => admin.script('FLUSH')));
    const busy = await Promise.all([1, 2].map((n) => blockRedis(quorum.servers[n]!.url, 100)));
    const lock = await app.locks.acquire('fresh', { autoRenew: false });
    await Promise.all(busy.map((block) => block.ended));
    // Every master ran its acquisition and whatever came after it (a give-back included).
    await Promise.all(nodes.map((admin) => admin.ping()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await Promise.all(nodes.map((admin) => admin.exists('lock:{fresh}')))).toEqual([1, 1, 1]);
    await lock.release();
  }, 20_000);
});
