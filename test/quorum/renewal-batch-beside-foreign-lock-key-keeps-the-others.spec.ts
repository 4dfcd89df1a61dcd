import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';
import { sleep } from '../support/lock-app.js';

/**
 * Found by review (foreign data at each quorum script's keys): the watchdog renews the locks due
 * together in one call per master (RENEW_MANY, see RENEW_LOOP), which read each lock with
 * redis.call('GET'): a hash written at one lock's key raised WRONGTYPE for the whole call, so on a
 * majority of masters every lock of the batch went unconfirmed, and all four were lost as their
 * leases ran out. Such a lock is now answered ELSEWHERE and renewed alone, refused alone.
 */
describe('quorum: renewals batched with a lock whose key holds a hash on a majority', () => {
  const { app, admin } = useQuorumNodes();

  it('the other locks of the batch stay held', { timeout: 30_000 }, async () => {
    const { locks } = await app({ ttl: 1_000, renewInterval: 200 });
    const held = await Promise.all(['a', 'b', 'c', 'd'].map((key) => locks.acquire(`q-batch-${key}`)));
    try {
      for (const i of [0, 1]) await admin(i, async (node) => void (await node.del('lock:{q-batch-a}'), await node.hset('lock:{q-batch-a}', 'f', '1')));
      await sleep(2_500);
      expect(held.map((lock) => lock.held)).toEqual([false, true, true, true]);
    } finally {
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
    }
  });
});
