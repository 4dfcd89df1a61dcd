/**
 * Found by review (an older session's suspicion about @Locked Observables under @nestjs/schedule,
 * settled here): a `@Locked` method that @nestjs/schedule runs and whose Observable return type
 * is not declared (inferred, `@Cron('* * * * *') @Locked('sync') sync() { return
 * this.http.post(...); }`, or an async method returning one) passes the startup's check (it reads
 * the declared type only, see schedule-metadata.ts). Each tick's call takes the lock, the
 * schedule awaits the Promise of the Observable and never subscribes: the work never runs, and
 * the lock stays held for its ttl. The warnings said to declare the return type as Observable
 * (which the startup refuses for a scheduled method: "its return type is not declared ...
 * Declare the return type `Observable<...>` ... or make the method async", and at the ttl
 * "Declare the method's return type as Observable to take the lock at subscription") or to make
 * the method async (which leaves the work never running). The job decorators' warnings were
 * fixed so in session 48 (scheduled-job-returning-undeclared-observable-...spec.ts); @Locked's
 * said what docs/locks.md's advice for a scheduled method contradicts ("return
 * `lastValueFrom(...)` from an `async` method instead").
 *
 * Expected: a scheduled @Locked method is told that the schedule never subscribes, and to
 * return lastValueFrom(...), as the job methods and the startup's refusal say.
 * Code at fault: lib/core/engine/locked-call.ts `warnUndeclaredObservable`, `holdWhileSubscribed`.
 */
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { of, tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a scheduled @Locked method returning an Observable whose return type is not declared', () => {
  useRedis();

  it.each([
    ['inferred', 'Feed.sync'],
    ['returned by an async method', 'Feed.asyncSync'],
  ])('is told that the schedule never subscribes to it (%s), and to return lastValueFrom(...)', async (_case, where) => {
    const calls = { 'Feed.sync': 0, 'Feed.asyncSync': 0 } as Record<string, number>;
    let subscribed = 0;
    @Injectable()
    class Feed {
      @Interval(20)
      @Locked('feed:sync', { ttl: '1s', onBusy: 'skip' })
      sync() {
        calls['Feed.sync']!++;
        return of(1).pipe(tap(() => subscribed++));
      }
      @Interval(20)
      @Locked('feed:async-sync', { ttl: '1s', onBusy: 'skip' })
      async asyncSync() {
        calls['Feed.asyncSync']!++;
        return of(1).pipe(tap(() => subscribed++));
      }
    }
    const app = await startJobApp([Feed]);
    // A second call: the first one's Observable was given up at its lock's ttl.
    await expect.poll(() => calls[where], { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(subscribed).toBe(0);
    const lines = (): string[] => app.logs.lines.filter((line) => line.level === 'warn' && line.message.includes(where)).map((line) => line.message);
    // Both warnings: the first call's, and the one at the lock's ttl.
    await expect.poll(() => lines().some((line) => line.includes('not subscribed within'))).toBe(true);
    for (const warning of lines()) {
      expect(warning).toContain('@Interval() awaits what the method returns and never subscribes to it');
      expect(warning).toContain('lastValueFrom(');
      expect(warning).not.toContain('make the method async');
      expect(warning).not.toContain("Declare the method's return type as Observable");
    }
  }, 30_000);
});
