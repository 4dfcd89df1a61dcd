import { Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, type Lock } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

/**
 * Found by review (thirty-seventh session), beside `runAsLeader()`'s work returning an Observable
 * (run-as-leader-observable-work-not-waited-at-close.spec.ts). The election awaits what a hook
 * returns (lib/scheduling/leader-election.runner.ts, `acquired()` and `tellLost()`): an
 * Observable (`onLeadershipAcquired() { return this.http.post(...) }`, a `ClientProxy.send()`)
 * or a generator is "awaited" as a plain value, never subscribed (nor iterated), so its work
 * never ran, and nothing said so: the instance led, and told nobody that its hook did nothing.
 * (The hook interfaces type `void | Promise<void>`: a class that does not declare `implements`,
 * or plain JavaScript, gets this far.)
 */
describe('a @LeaderElection hook returning an Observable or a generator', () => {
  useRedis();

  it('onLeadershipAcquired: refused as a hook that threw (logged, the term stepped down from), not dropped unseen', async () => {
    const key = 's37-hook-observable';
    let subscribed = 0;
    const ended: string[] = [];
    @Injectable()
    @LeaderElection(key, { ttl: '3s' })
    class FeedLeader {
      onLeadershipAcquired(lock: Lock): Observable<string> {
        lock.signal.addEventListener('abort', () => ended.push((lock.signal.reason as { reason?: string }).reason ?? 'aborted'));
        return new Observable<string>((subscriber) => {
          subscribed++;
          subscriber.complete();
        });
      }
      onLeadershipLost(): void {
        ended.push('told');
      }
    }
    const app = await startJobApp([FeedLeader]);
    // Before: the instance led silently, the Observable never subscribed.
    await expect.poll(() => app.logs.lines.find((line) => line.level === 'error')?.message, { timeout: 5_000 }).toMatch(/onLeadershipAcquired returned an Observable/);
    expect(app.logs.has('error', 'onLeadershipAcquired of FeedLeader')).toBe(true);
    expect(subscribed).toBe(0);
    await expect.poll(() => ended.slice(0, 2)).toEqual(['stepped-down', 'told']);
    expect(app.get(LeadershipService).isLeader(key)).toBe(false);
    await closeNow(app);
  }, 30_000);

  it('onLeadershipLost: its generator refused with an error logged, its body never run', async () => {
    const key = 's37-hook-generator';
    let led = false;
    let iterated = 0;
    @Injectable()
    @LeaderElection(key, { ttl: '3s' })
    class FeedLeader {
      onLeadershipAcquired(): void {
        led = true;
      }
      *onLeadershipLost(): Generator<number> {
        iterated++;
        yield 1;
      }
    }
    const app = await startJobApp([FeedLeader]);
    await expect.poll(() => led, { timeout: 5_000 }).toBe(true);
    await closeNow(app);
    expect(iterated).toBe(0);
    // Before: nothing logged; the hook's body never ran.
    expect(app.logs.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      expect.stringMatching(/^onLeadershipLost of FeedLeader: onLeadershipLost returned a generator .*, whose items come as it is iterated, and the election neither subscribes to nor iterates what a hook returns: its work never ran; /),
    ]);
  }, 30_000);
});
