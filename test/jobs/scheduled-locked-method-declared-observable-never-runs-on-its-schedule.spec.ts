/**
 * Found by review (forty-first session), beside
 * scheduled-job-declared-observable-never-runs-on-its-schedule.spec.ts: a `@Locked` method declared
 * to return an Observable takes its lock, and runs, when the Observable is subscribed
 * (docs/locked.md). `@nestjs/schedule` awaits what a scheduled method returns and never subscribes:
 * `@Cron() @Locked('digest') send(): Observable<...>` never ran on its schedule, without a word.
 */
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { of, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockError } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp, startupRefusal } from './support.js';

describe('a scheduled @Locked method declared to return an Observable', () => {
  useRedis();

  it('is refused at startup, naming the method, its schedule and the remedy', async () => {
    @Injectable()
    class Digest {
      @Interval(20)
      @Locked('digest')
      send(): Observable<number> {
        return of(1);
      }
    }
    const refused = await startupRefusal([Digest]);
    expect(refused).toBeInstanceOf(RedisLockError);
    expect(refused.message).toMatch(/^@Locked on Digest\.send: @Interval\(\) awaits what the method returns and never subscribes to it/);
    expect(refused.message).toContain('lastValueFrom');
  });

  it('starts when it is not scheduled, or returns a Promise', async () => {
    @Injectable()
    class Fine {
      @Locked('stream')
      stream(): Observable<number> {
        return of(1);
      }
      @Interval(60_000)
      @Locked('tick')
      async tick(): Promise<void> {}
    }
    const app = await startJobApp([Fine]);
    expect(app.get<Fine>(Fine)).toBeInstanceOf(Fine);
  });
});
