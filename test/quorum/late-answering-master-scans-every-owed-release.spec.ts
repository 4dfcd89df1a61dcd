import { describe, expect, it } from 'vitest';
import { RecentMap } from '../../lib/core/stores/quorum/recent-entries.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Suspected in the thirty-ninth session, shown in the fortieth. A master that answers after a
 * round has ended (it left the round unanswered) is sent what it was owed meanwhile
 * (QuorumStore.answersAgain). The releases owed were kept in one map for every master, so each
 * such answer walked all of them, the other masters' too: with one master refusing every command
 * (thousands of releases owed to it, up to 20,000) and another answering each round late, every
 * late answer cost a walk of every release owed. Counted here as the entries walked, not timed:
 * now a late answer walks what is owed to that master alone.
 */
describe('quorum: a master answering after each round has ended, while another is owed many releases', () => {
  const { servers, app, admin } = useQuorumNodes();

  it('walks only the releases owed to itself at each late answer', { timeout: 120_000 }, async () => {
    const locks = await app({ ttl: 10_000 });
    const owed = 500;
    const held = [];
    for (let i = 0; i < owed; i++) held.push(await locks.locks.acquire(`owed:${i}`));
    // Master 1 refuses every write, for a while (NOREPLICAS: no replica to write with): each
    // release is owed to it (until app.close()). Not a refusal asking again cannot change
    // (NOPERM), whose release is not owed.
    await admin(1, (node) => node.config('SET', 'min-replicas-to-write', '1'));
    try {
      for (const lock of held) await lock.release();
    } finally {
      await admin(1, (node) => node.config('SET', 'min-replicas-to-write', '0'));
    }
    let walked = 0;
    const walk = RecentMap.prototype[Symbol.iterator];
    RecentMap.prototype[Symbol.iterator] = function* (this: RecentMap<unknown, unknown>) {
      for (const entry of walk.call(this)) {
        walked++;
        yield entry;
      }
    };
    try {
      for (let round = 0; round < 3; round++) {
        // Master 2 leaves a read's round unanswered, then answers it.
        servers[2]!.pause();
        await locks.locks.isLocked('late');
        servers[2]!.resume();
        // Answered on the same connection after the read left unanswered: answersAgain has run.
        await locks.locks.isLocked('late');
      }
    } finally {
      RecentMap.prototype[Symbol.iterator] = walk;
    }
    // Before: at least 1,500, every release owed to master 1 at each of the three late answers.
    expect(walked).toBeLessThan(owed);
  });
});
