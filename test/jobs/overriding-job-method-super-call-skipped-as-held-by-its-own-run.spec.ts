/**
 * Found by review (session 43). A job's default key is `ClassName.methodName` with the provider's
 * class, so a subclass that overrides a job method, decorates its override too (its own ttl, its
 * own `@Cron()`) and calls `super.run()` binds both to one key (`NightlySync.run`). The super
 * call, made within the override's run, took that run's lock again outside its chain, found it
 * held by the very run that made it and was skipped as `held-elsewhere`: it resolved `undefined`
 * and the base class' work never ran, with a debug line only. A call of another job method (the
 * base class' spec) made within a run that holds every lock it would take is part of that run and
 * runs in it; a call of the same method from within its own run (recursion, a timer it started)
 * is still skipped (test/jobs/without-overlapping-reentered-by-timer-from-own-run.spec.ts).
 */
import { Injectable } from '@nestjs/common';
import { Observable, concat, defer, lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping, type JobLockOptions, type LockEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a decorated override of a job method calling super', () => {
  const redis = useRedis();

  it.each([
    ['@WithoutOverlapping()', false],
    ['@OnOneInstance() @WithoutOverlapping()', true],
  ])('with %s on both runs the base class work within its own run', async (_, oneInstance) => {
    const lockedInBase: number[] = [];
    const both = (options: JobLockOptions = {}): MethodDecorator => {
      return (target, key, descriptor) => {
        WithoutOverlapping(options)(target, key, descriptor as never);
        if (oneInstance) OnOneInstance()(target, key, descriptor as never);
      };
    };
    @Injectable()
    class SyncJob {
      @both()
      async run(): Promise<unknown> {
        lockedInBase.push(await redis.exists('lock:{NightlySync.run}'));
        return 'base';
      }
    }
    @Injectable()
    class NightlySync extends SyncJob {
      @both({ ttl: '10s' })
      override async run(): Promise<unknown> {
        return ['nightly', await super.run()];
      }
    }
    const app = await startJobApp([NightlySync]);
    const skipped: string[] = [];
    app.get<LockService>(LockService).events$.subscribe((event: LockEvent) => event.type === 'skipped' && skipped.push(`${event.key}: ${event.reason}`));
    const result = await app.get<NightlySync>(NightlySync).run();
    // Before: { result: ['nightly', undefined], lockedInBase: [], skipped: ['NightlySync.run: held-elsewhere'] }
    expect({ result, lockedInBase, skipped }).toEqual({ result: ['nightly', 'base'], lockedInBase: [1], skipped: [] });
    expect(await redis.exists('lock:{NightlySync.run}')).toBe(0);
  });

  it('declared to return an Observable runs the base class stream within its own run', async () => {
    @Injectable()
    class FeedJob {
      @WithoutOverlapping()
      stream(): Observable<string> {
        return defer(async () => `base ${await redis.exists('lock:{NightlyFeed.stream}')}`);
      }
    }
    @Injectable()
    class NightlyFeed extends FeedJob {
      @WithoutOverlapping({ ttl: '10s' })
      override stream(): Observable<string> {
        return concat(of('nightly'), super.stream());
      }
    }
    const app = await startJobApp([NightlyFeed]);
    // Before: ['nightly'] (the base stream completed empty, skipped).
    expect(await lastValueFrom(app.get<NightlyFeed>(NightlyFeed).stream().pipe(toArray()))).toEqual(['nightly', 'base 1']);
    expect(await redis.exists('lock:{NightlyFeed.stream}')).toBe(0);
  });
});
