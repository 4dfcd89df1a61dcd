import { Injectable } from '@nestjs/common';
import { lastValueFrom, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockError } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (thirty-seventh session), beside the same defect of `using()`
 * (test/api/using-observable-work-runs-unlocked.spec.ts). `runAsLeader(key, work)` promises that
 * "at `app.close()` (or a step-down) the lease is given back only after the work has ended". A
 * `work` returning an Observable (`HttpService.post()`, `ClientProxy.send()`) had "ended" at once:
 * `runAsLeader()` resolved with the Observable, its work ran when the caller subscribed, unseen by
 * the term, and `app.close()` gave the lease back under it, for another instance to lead (and start
 * the same work) while it still ran.
 */
describe('runAsLeader() with work that returns an Observable', () => {
  const redis = useRedis();

  it('is refused, the Observable never subscribed, the term unchanged', async () => {
    const key = 's37-observable-work';
    @Injectable()
    @LeaderElection(key, { ttl: '3s' })
    class FeedLeader {}
    const app = await startJobApp([FeedLeader]);
    const leadership = app.get(LeadershipService);
    await expect.poll(() => leadership.isLeader(key), { timeout: 5_000 }).toBe(true);
    let subscribed = 0;
    const work = new Observable<string>((subscriber) => {
      subscribed++;
      subscriber.next('pushed');
      subscriber.complete();
    });
    const outcome = await leadership.runAsLeader(key, () => work).then(
      (result: unknown) => lastValueFrom(result as Observable<string>).then(() => 'subscribed after runAsLeader() resolved'),
      (error: unknown) => error,
    );
    // Before: 'subscribed after runAsLeader() resolved', the work run outside the term.
    expect(outcome).toBeInstanceOf(RedisLockError);
    expect((outcome as Error).message).toMatch(/^runAsLeader\("s37-observable-work", work\): work returned an Observable/);
    expect(subscribed).toBe(0);
    expect(leadership.isLeader(key)).toBe(true);
    await closeNow(app);
    expect(await redis.exists(`lock:{${key}}`)).toBe(0);
  }, 30_000);
});
