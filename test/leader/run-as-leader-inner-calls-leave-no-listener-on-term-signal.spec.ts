/**
 * Coverage (forty-third session, no defect found): a leader's term can last for days, and every
 * `using()` / `@Locked` call made inside its work that waits for its lock listens to the term's
 * signal while it waits (a term that ends ends the wait: see wait-ends-with-chain.ts). Each such
 * wait, however it ends (taken, timed out, aborted by the caller's own signal, a multi-key call
 * given up, a `@Locked` method), leaves no listener behind on the term's signal: one per call
 * would grow for the term's life (and Node warns past 10).
 * test/jobs/inner-call-waiting-in-run-whose-lock-was-lost-runs-after-loss.spec.ts covers an
 * outer `using()` with a wait taken or timed out.
 */
import { getEventListeners } from 'node:events';
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, Locked, LockNotAcquiredError, LockService } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

@Injectable()
@LeaderElection('listened-term', { ttl: '30s' })
class Leader {}

@Injectable()
class Batch {
  @Locked('listened-locked', { waitTimeout: 200 })
  async run(): Promise<string> {
    return 'ran';
  }
}

describe('calls waiting inside runAsLeader() work', () => {
  useRedis();

  it('leave no listener on the term signal, however their wait ends', async () => {
    const app = await startJobApp([Leader, Batch]);
    const leadership = app.get(LeadershipService);
    const locks = app.get(LockService);
    const batch = app.get(Batch);
    await expect.poll(() => leadership.isLeader('listened-term'), { timeout: 5_000 }).toBe(true);
    const term = leadership.leaderLock('listened-term')!;
    const listeners = (): number => getEventListeners(term.signal, 'abort').length;
    const before = listeners();
    const held = await Promise.all(['listened', 'listened-locked', 'listened-b'].map((key) => locks.acquire(key, { ttl: '30s' })));
    const after: Record<string, number> = {};
    await leadership.runAsLeader('listened-term', async () => {
      await expect(locks.using('listened', () => 'ran', { waitTimeout: 200 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      after.timedOut = listeners();
      const own = new AbortController();
      const aborted = locks.using('listened', () => 'ran', { waitTimeout: '30s', signal: own.signal }).catch((error: unknown) => error);
      await expect.poll(() => locks.inspect('listened').then((inspection) => inspection.waiters), { timeout: 5_000 }).toBe(1);
      own.abort(new Error('caller gave up'));
      expect(await aborted).toMatchObject({ message: 'caller gave up' });
      after.aborted = listeners();
      await expect(batch.run()).rejects.toBeInstanceOf(LockNotAcquiredError);
      after.locked = listeners();
      await expect(locks.using(['listened-a', 'listened-b'], () => 'ran', { waitTimeout: 200 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      after.multiKey = listeners();
      const taken = locks.using('listened', () => 'ran', { waitTimeout: '30s' });
      await expect.poll(() => locks.inspect('listened').then((inspection) => inspection.waiters), { timeout: 5_000 }).toBe(1);
      await held[0]!.release();
      expect(await taken).toBe('ran');
      after.taken = listeners();
    });
    await Promise.all(held.slice(1).map((lock) => lock.release()));
    expect(after).toEqual({ timedOut: before, aborted: before, locked: before, multiKey: before, taken: before });
  }, 30_000);
});
