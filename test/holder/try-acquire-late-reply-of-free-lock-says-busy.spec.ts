/**
 * docs/locks.md: `onBusy: 'skip'` "skips only when another holder has the lock: when Redis does
 * not answer, the call rejects with LockNotAcquiredError (its cause the Redis error), so that a
 * job does not silently do nothing through an outage"; `tryAcquire()` resolves `null` when the
 * lock is busy.
 *
 * A `tryAcquire()` of a FREE key whose reply comes after the lease it started (Redis slow for
 * longer than the ttl, or this process stalled) is given back (STALE_REPLY) and then reported as
 * busy: LockManager.tryAcquire maps STALE_REPLY to `{ pttl: 0 }`, resolves `null` and emits a
 * `not-acquired` event with outcome `busy`. Nobody held the key; a `skip` job skips silently.
 * (test/topologies/wait-for-replicas-short-call-ttl-refused.spec.ts fixed the same answer for the
 * waitForReplicas case by refusing short ttls; the plain late reply still says "busy".)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('tryAcquire() of a free key whose reply came after its lease', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('does not answer "busy" (null)', { timeout: 20_000 }, async () => {
    app = await createLockApp({ redis: own.url() });
    const events: string[] = [];
    app.locks.events$.subscribe((event) => {
      if (event.type === 'not-acquired') events.push(event.outcome);
    });
    // Redis answers nothing for 600 ms; the lease asked for is 300 ms.
    const { ended } = await blockRedis(own.url(), 600);
    const outcome = await app.locks.tryAcquire('free:slow', { ttl: 300 }).then(
      (lock) => (lock === null ? 'null (busy)' : 'lock'),
      (error: Error) => `rejected: ${error.constructor.name}`,
    );
    await ended;
    expect({ outcome, events }).not.toEqual({ outcome: 'null (busy)', events: ['busy'] });
  });
});
