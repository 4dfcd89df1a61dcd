import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { sleep } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by CI (the board's quorum paging spec, on a loaded machine). A master that lost its
 * scripts answers an acquisition NOSCRIPT, and the client sends it again as EVAL; once such a
 * grant lands, the other masters are asked whether the token still holds the lock, and it is
 * given back if not (test/scale/quorum-late-grant.spec.ts: a released lock must not stay there).
 * A master that did not answer that check within its 200 ms counted as "not the token's": with
 * the others busy for a moment, a live holder lost that master's copy, one failure away from
 * losing its majority. Here master 0 is slow and has no scripts, the unfenced acquisition ends
 * at the majority of masters 1 and 2, and both are busy when master 0's resent grant lands: the
 * check goes unanswered, and the copy must stay.
 */
describe('quorum: a resent grant whose ownership check goes unanswered', () => {
  const quorum = useQuorumNodes();
  /** A connection of the test's own to each master, disconnected when the test ends (passed or failed). */
  const admins = (): Redis[] => {
    const nodes = quorum.servers.map((server) => new Redis(server.url));
    onTestFinished(() => nodes.forEach((node) => node.disconnect()));
    return nodes;
  };

  it('keeps the live holder’s copy on the master that granted late', async () => {
    const app = await quorum.app({ ttl: 30_000 });
    const nodes = admins();
    // Every script cached on every node, then master 0 restarted (as far as scripts go).
    await (await app.locks.acquire('warm', { fencing: false })).release();
    await nodes[0]!.script('FLUSH');

    const slow = await blockRedis(quorum.servers[0]!.url, 600);
    const lock = await app.locks.acquire('held', { fencing: false, autoRenew: false });
    // Decided by masters 1 and 2; master 0 has not even answered NOSCRIPT yet.
    const token = await nodes[1]!.get('lock:{held}');
    expect(token).not.toBeNull();
    const busy = await Promise.all([1, 2].map((n) => blockRedis(quorum.servers[n]!.url, 1_500)));
    await slow.ended;
    // Master 0 answers NOSCRIPT, takes the EVAL sent again, and the check asks masters 1 and 2,
    // which answer only once their block ends, after its 200 ms.
    await Promise.all(busy.map((block) => block.ended));
    await sleep(200);
    expect(lock.held).toBe(true);
    expect(await Promise.all(nodes.map((admin) => admin.get('lock:{held}')))).toEqual([token, token, token]);
    await lock.release();
  }, 20_000);
});
