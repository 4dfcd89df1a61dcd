/**
 * Found by review (forty-first session). A job method declared to return an Observable takes its
 * locks, and runs, when its Observable is subscribed (docs/jobs-and-leaders.md, "Return types").
 * `@nestjs/schedule` awaits what a `@Cron()`, `@Interval()` or `@Timeout()` method returns and
 * never subscribes to it: such a job never ran on its schedule, without a word. Without the job
 * decorator the method's body did run at each tick; adding `@WithoutOverlapping()` silently
 * stopped the job (on main, a twin `@Interval(20)` counted ticks while the job's body never ran).
 */
import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { defer, lastValueFrom, of, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, RedisLockError, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { startJobApp, startupRefusal } from './support.js';

describe('a scheduled job method declared to return an Observable', () => {
  useRedis();

  it('is refused at startup, naming the method, its schedule and the remedy (@Interval below the job decorator)', async () => {
    @Injectable()
    class Feed {
      runs = 0;
      @WithoutOverlapping()
      @Interval(20)
      poll(): Observable<number> {
        return defer(() => {
          this.runs++;
          return of(1);
        });
      }
    }
    const refused = await startupRefusal([Feed]);
    expect(refused).toBeInstanceOf(RedisLockError);
    expect(refused.message).toMatch(/^@WithoutOverlapping\(\) on Feed\.poll: @Interval\(\) awaits what the method returns and never subscribes to it/);
    expect(refused.message).toContain('lastValueFrom');
  });

  it('is refused with @Cron() above the job decorators too', async () => {
    @Injectable()
    class Digest {
      @Cron('*/5 * * * * *')
      @OnOneInstance()
      @WithoutOverlapping()
      send(): Observable<void> {
        return of(undefined);
      }
    }
    await expect(startJobApp([Digest])).rejects.toThrow(/^@OnOneInstance\(\) @WithoutOverlapping\(\) on Digest\.send: @Cron\(\) awaits/);
  });

  it('is refused with @Timeout() too; one returning a Promise, or an Observable with no schedule, starts', async () => {
    @Injectable()
    class Warmup {
      @Timeout(60_000)
      @WithoutOverlapping()
      once(): Observable<void> {
        return of(undefined);
      }
    }
    await expect(startJobApp([Warmup])).rejects.toThrow(/^@WithoutOverlapping\(\) on Warmup\.once: @Timeout\(\) awaits/);
    @Injectable()
    class Fine {
      @Interval(60_000)
      @WithoutOverlapping()
      async tick(): Promise<void> {}
      @WithoutOverlapping()
      stream(): Observable<number> {
        return of(1);
      }
    }
    const app = await startJobApp([Fine]);
    expect(app.get<Fine>(Fine)).toBeInstanceOf(Fine);
  });

  it('starts in an application without @nestjs/schedule, where its schedule runs nothing and its callers subscribe', async () => {
    @Injectable()
    class Report {
      @Cron('0 0 * * * *')
      @WithoutOverlapping()
      build(): Observable<string> {
        return of('built');
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Report] }).compile();
    await moduleRef.init();
    try {
      expect(await lastValueFrom(moduleRef.get(Report).build())).toBe('built');
    } finally {
      await moduleRef.close();
    }
  });
});
