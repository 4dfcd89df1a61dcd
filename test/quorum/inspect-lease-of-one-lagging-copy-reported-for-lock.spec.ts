import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-fifth session; carried as a suspicion from the thirty-fourth). In quorum
 * mode `inspect()` (and the lock board) gave a held lock's lease as the shortest of its copies'.
 * A lock is held until fewer than a majority of its copies are left, so one copy that missed the
 * holder's renewals (its link to that master cut for a while, say) is not the lock's lease: the
 * lock was reported a moment from expiring, and the same lock, its holder unchanged, was then
 * reported with its whole lease again once that copy ran out. It is now the lease a majority of
 * the copies still have: the majority-th longest (the shortest, as before, for a lock held on fewer
 * copies, reported held because masters that did not answer cannot rule it out).
 */
describe('quorum: inspect() of a held lock whose copy on one master missed renewals', () => {
  const { app, admin, get, until } = useQuorumNodes();

  it("reports the lock's lease, not the lagging copy's", { timeout: 30_000 }, async () => {
    // Its first renewal (at a third of the ttl) comes after the lagging copy below ran out.
    const { locks } = await app({ ttl: 30_000 });
    const lock = await locks.acquire('q:lagging');
    // The round ends on a majority's grants: master 2's may land a moment later.
    expect(await until(() => get(2, 'lock:{q:lagging}'), (owner) => owner !== null, 5_000)).not.toBeNull();
    // Master 2's copy missed the renewals: its lease is nearly out.
    await admin(2, (node) => node.pexpire('lock:{q:lagging}', 5_000));
    // Asked until all three masters answered in one round: under load one of masters 0 and 1 may
    // answer after the round's time, and the lease of the two copies left to judge is rightly the
    // shorter. Within the lagging copy's life.
    let seen = await locks.inspect('q:lagging');
    for (let asked = 1; asked < 20 && !(seen.ttlMs! > 5_000); asked++) seen = await locks.inspect('q:lagging');
    expect(seen.held).toBe(true);
    // Before: at most 5,000 ms, the lagging copy's.
    expect(seen.ttlMs).toBeGreaterThan(5_000);
    expect(await admin(2, (node) => node.exists('lock:{q:lagging}'))).toBe(1);
    // The copy runs out and the lock does not: held by the same holder, masters 0 and 1 a majority.
    await until(() => admin(2, (node) => node.exists('lock:{q:lagging}')), (exists) => exists === 0, 10_000);
    const after = await locks.inspect('q:lagging');
    expect(after.held).toBe(true);
    expect(after.holder).toEqual(seen.holder);
    expect(await locks.tryAcquire('q:lagging')).toBeNull();
    await lock.release();
  });
});
