import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * As on one Redis (test/api/inspect-of-counter-at-zero-reports-token-zero.spec.ts): fencing
 * counters holding `0` on the masters (set by hand) are counters no acquisition handed out a token
 * of; a quorum master's next acquisition raises them to its seed, as lost ones. inspect() reported
 * `fencingToken: 0`, "no token", where a lost counter is left out (`undefined` when every one is).
 */
describe('quorum: inspect() of a key whose fencing counters hold 0', () => {
  const { app, admin } = useQuorumNodes();

  it('on every master: no token; on a majority beside a token: that token', { timeout: 30_000 }, async () => {
    const { locks } = await app({ ttl: 5_000 });
    for (const i of [0, 1, 2]) await admin(i, (node) => node.set('lock:{q-zero}:fence', '0'));
    expect(await locks.inspect('q-zero')).toEqual({ key: 'q-zero', held: false, waiters: 0 });
    await admin(2, (node) => node.set('lock:{q-zero}:fence', '1800000000000'));
    expect((await locks.inspect('q-zero')).fencingToken).toBe(1_800_000_000_000);
  });
});
