/**
 * Found by review (thirty-seventh session). A `@Locked` (or job) method that returns an
 * Observable without declaring it (through a Promise) takes its lock at call time and holds it
 * while the stream's first subscription lasts; a second subscription is refused. Its error said
 * "subscribed a second time, after its lock was released" (a job's: "after its run ended") even
 * while the first subscription was running under the lock: a reader would look for a release
 * that never happened, while the lock is held for the first subscription.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { firstValueFrom, lastValueFrom, Subject, toArray, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('an undeclared Observable subscribed a second time while its first subscription runs', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  let rows = new Subject<number>();
  @Injectable()
  class Reports {
    @Locked('report:<0>')
    async rows(_id: string): Promise<Observable<number>> {
      return rows;
    }

    @WithoutOverlapping({ key: 'report-export' })
    async export(): Promise<Observable<number>> {
      return rows;
    }
  }

  async function open(): Promise<Reports> {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Reports] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await ref.init();
    closers.push(() => ref.close());
    return ref.get(Reports);
  }

  it.each([
    ['@Locked', 'lock:{report:1}', (reports: Reports) => reports.rows('1')],
    ['a job', 'lock:{report-export}', (reports: Reports) => reports.export()],
  ] as const)('is told the lock is the first subscription\'s, not that it ended (%s)', async (_, key, call) => {
    rows = new Subject<number>();
    const stream = await call(await open());
    const first = lastValueFrom(stream.pipe(toArray()));
    const second = await firstValueFrom(stream).then(
      () => undefined,
      (error: unknown) => error,
    );
    // The first subscription still runs under the lock.
    expect(await redis.exists(key)).toBe(1);
    expect(second).toBeInstanceOf(RedisLockError);
    const message = (second as Error).message;
    // Before: "... subscribed a second time, after its lock was released" (a job: "after its run ended").
    expect(message).not.toMatch(/released|ended/);
    expect(message).toMatch(/a second time.*first subscription/);
    rows.next(1);
    rows.complete();
    expect(await first).toEqual([1]);
    await expect.poll(() => redis.exists(key)).toBe(0);
  });
});
