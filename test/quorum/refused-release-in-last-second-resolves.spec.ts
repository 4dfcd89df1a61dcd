/**
 * Found by review of 8aa94e2 ("a quorum release round no longer ends early on a refused majority").
 *
 * Promised: docs/deployment.md, quorum: a node gets "a second to answer a release" and a round
 * "ends as soon as a majority released"; a release a majority REFUSED is the lock's loss
 * (`QuorumStore.release` returns `{ released: false }`: "not this owner's on so many nodes that
 * no majority can have held it"), so the holder hears `lost` (reason `refused`) and `release()`
 * resolves, as it does for a lock with a long lease (the control). docs/locks.md: `release()`
 * rejects with a `RedisLockError` only for a release Redis did NOT answer.
 *
 * What happened: a refused majority waited out the round (RELEASE_ROUND_MS = 1 s) for
 * the frozen node; but the HeldLock bounds its release by `max(deadline, now +
 * LAST_ATTEMPT_GRACE_MS)`, the same second, computed first, on the same deadline sweeper, and
 * the round's own time-up is deferred by a `setImmediate` (QuorumRound.expire). So for any lock
 * released within the last second of its lease (every lock with a ttl up to ~1 s, or any lock
 * after a stall) the sweeper fails the release first: `release()` rejects "Redis did not answer
 * the release ... by the end of its lease", the loss is reported as an unconfirmed `released`,
 * and the lost lock is put on the unconfirmed list, though two of three nodes answered at once.
 * Before 8aa94e2 the two refusals ended the round at once. The round now times out after three
 * quarters of that second (RELEASE_ROUND_MS), before the holder's bound.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Duration, LockEvent } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

describe('quorum of 3: a release refused by two nodes while the third is frozen', () => {
  const quorum = useQuorumNodes();
  afterEach(() => quorum.servers.forEach((server) => server.resume()));

  async function releaseRefused(ttl: Duration, key: string): Promise<{ release: string; events: string[] }> {
    const app = await quorum.app({ ttl });
    const events: string[] = [];
    app.locks.events$.subscribe((event: LockEvent) => {
      if (event.key === key) events.push(`${event.type}${'reason' in event ? ` ${event.reason}` : ''}${'unconfirmed' in event && event.unconfirmed ? ' unconfirmed' : ''}`);
    });
    const lock = await app.locks.acquire(key);
    // The lock's copy gone from nodes 0 and 1 (restarted without persistence, say); node 2 frozen.
    await quorum.admin(0, (node) => node.del(`lock:{${key}}`));
    await quorum.admin(1, (node) => node.del(`lock:{${key}}`));
    quorum.servers[2]!.pause();
    const release = await lock.release().then(
      () => 'resolved',
      (error: Error) => `${error.name}: ${error.message}`,
    );
    return { release, events };
  }

  it('(control) ttl 30 s: release() resolves and the loss is reported as refused', { timeout: 15_000 }, async () => {
    expect(await releaseRefused('30s', 'rv:q3:long')).toEqual({ release: 'resolved', events: ['acquired', 'lost refused'] });
  });

  it('ttl 900 ms (released well inside its lease): the same', { timeout: 15_000 }, async () => {
    expect(await releaseRefused('900ms', 'rv:q3:short')).toEqual({ release: 'resolved', events: ['acquired', 'lost refused'] });
  });
});
