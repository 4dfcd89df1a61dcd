/**
 * Found by review (forty-first session). A job or `@Locked` method that `@nestjs/schedule` runs
 * and that is declared to return an Observable would never run on its schedule (nobody subscribes),
 * so the startup is refused (test/jobs/scheduled-job-declared-observable-never-runs-on-its-schedule.spec.ts);
 * but only when the application has `@nestjs/schedule`, which lib/scheduling/schedule-metadata.ts
 * told by its provider's class name, `ScheduleExplorer`. A minified build (a bundler that renames
 * classes, Nest's DI resolving them by reference all the same) renames it: the job started,
 * and never ran on its schedule, without a word. Simulated here by renaming the class as a
 * minifier would.
 */
import { Injectable } from '@nestjs/common';
import { Interval, ScheduleExplorer } from '@nestjs/schedule';
import { of, Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startupRefusal } from './support.js';

describe('a scheduled method declared to return an Observable, in a build that renames classes', () => {
  useRedis();
  const name = Object.getOwnPropertyDescriptor(ScheduleExplorer, 'name')!;
  afterEach(() => {
    Object.defineProperty(ScheduleExplorer, 'name', name);
  });

  it('is refused at startup all the same (a job, and @Locked)', async () => {
    Object.defineProperty(ScheduleExplorer, 'name', { value: 'e', configurable: true });
    @Injectable()
    class Feed {
      @WithoutOverlapping()
      @Interval(60_000)
      poll(): Observable<number> {
        return of(1);
      }
    }
    @Injectable()
    class Ticker {
      @Locked('ticker')
      @Interval(60_000)
      tick(): Observable<number> {
        return of(1);
      }
    }
    // Was: both started ("started").
    const job = await startupRefusal([Feed]);
    expect(job).toBeInstanceOf(RedisLockError);
    expect(job.message).toMatch(/^@WithoutOverlapping\(\) on Feed\.poll: @Interval\(\) awaits what the method returns/);
    const locked = await startupRefusal([Ticker]);
    expect(locked).toBeInstanceOf(RedisLockError);
    expect(locked.message).toMatch(/^@Locked on Ticker\.tick: @Interval\(\) awaits what the method returns/);
  });
});
