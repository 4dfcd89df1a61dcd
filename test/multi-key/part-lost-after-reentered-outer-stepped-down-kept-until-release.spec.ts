/**
 * Found by review (s48). A multi-key lock one of whose keys the call chain held already (a
 * leader's term, here) re-enters that key: its part shares the outer lock's signal. When the
 * outer lock steps down (its term released by hand while the multi-key call still runs), the
 * multi-key lock's signal aborts with the step-down, which tells its code to stop while its keys
 * stay held, as a step-down's signal does. But the multi-key lock stopped watching its own parts
 * then: a later real loss of one of them (its key deleted, its renewal refused) was told by that
 * key alone, and the others were renewed on, locked against everyone, until release(); with no
 * re-entry the same loss gives them back at once (part-lost-keeps-other-parts-renewed.spec.ts),
 * and the lock reads as lost (`extend()` rejects with the part's loss). The same held for a lock
 * whose own parts' signals a shutdown aborted while its call still ran: a part lost then could
 * not abort its signal again, and nothing else told the lock.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockLostError, LockService, type MultiKeyLock } from '../../lib/index.js';
import { startJobApp } from '../jobs/support.js';
import { createLockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

@Injectable()
@LeaderElection('mk-stepped-term', { ttl: '30s' })
class Leader {}

describe('a multi-key lock re-entering a key whose outer lock then steps down', () => {
  const redis = useRedis();

  it("still gives its other keys back at once when one of its own keys is lost", { timeout: 30_000 }, async () => {
    const app = await startJobApp([Leader], { ttl: 900 });
    const leadership = app.get(LeadershipService);
    const locks = app.get(LockService);
    await expect.poll(() => leadership.isLeader('mk-stepped-term'), { timeout: 5_000 }).toBe(true);
    const term = leadership.leaderLock('mk-stepped-term')!;
    const seen = await leadership.runAsLeader('mk-stepped-term', () =>
      locks.using(['mk-stepped-term', 'mk-stepped-b', 'mk-stepped-c'], async (lock: MultiKeyLock) => {
        // The outer lock steps down: the multi-key lock's code is told to stop, its keys stay held.
        await term.release();
        expect(lock.signal.reason).toMatchObject({ reason: 'stepped-down' });
        expect(await redis.exists('lock:{mk-stepped-c}')).toBe(1);
        // One of its own keys is lost (a failover that lost its write, an operator's DEL).
        await redis.del('lock:{mk-stepped-b}');
        // Before: "mk-stepped-c" stayed locked, renewed, until this call's release().
        await expect.poll(() => redis.exists('lock:{mk-stepped-c}'), { timeout: 5_000 }).toBe(0);
        const extended = await lock.extend().then(
          () => 'extended',
          (error: unknown) => error,
        );
        // A nested call of a key the lock gave back fails with the loss, as one of the lost key does.
        const nestedLost = await locks.using('mk-stepped-b', () => 'ran').catch((error: unknown) => error);
        const nestedGivenBack = await locks.using('mk-stepped-c', () => 'ran').catch((error: unknown) => error);
        return { extended, nestedLost, nestedGivenBack };
      }),
    );
    expect(seen?.extended).toBeInstanceOf(LockLostError);
    expect(seen?.extended).toMatchObject({ key: 'mk-stepped-b', reason: 'refused' });
    expect(seen?.nestedLost).toBe(seen?.extended);
    // Before: the step-down's signal ('stepped-down', key "mk-stepped-term"), which says the lock
    // is still held, though the key was given back and the lock is lost.
    expect(seen?.nestedGivenBack).toBe(seen?.extended);
    expect(await redis.exists('lock:{mk-stepped-c}')).toBe(0);
  });

  // The same without re-entry: the application's shutdown tells the running call to stop (its
  // parts' signals abort, their keys stay held until it ends), and one of its keys is then lost.
  it('and so does one whose own parts were told to stop by the shutdown', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ ttl: 900, shutdownTimeout: '10s' });
    let closing: Promise<void> | undefined;
    try {
      await app.locks.using(['mk-closing-a', 'mk-closing-b'], async (lock) => {
        closing = app.close();
        await expect.poll(() => lock.signal.reason).toMatchObject({ reason: 'shutdown' });
        await redis.del('lock:{mk-closing-a}');
        // Before: "mk-closing-b" stayed locked, renewed, until this call ended.
        await expect.poll(() => redis.exists('lock:{mk-closing-b}'), { timeout: 5_000 }).toBe(0);
      });
    } finally {
      await (closing ?? app.close());
    }
  });
});
