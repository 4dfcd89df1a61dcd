/**
 * Found by review (forty-first session): `@Timeout()` with `@OnOneInstance()`. A claim of the
 * owner lease that comes back late (past a sixth of the ttl) skips its tick as `owner-uncertain`,
 * the first claim of a lease nobody held included (its fencing counter starts at a clock, so it
 * looks like a take-over: test/jobs/first-owner-claim-late-skips-once.spec.ts). "The next tick runs
 * here" is the remedy the docs gave; a `@Timeout()` fires once, and the other instances skip theirs
 * as `other-owner`: a Redis slow at the moment the timeouts fire (a startup under load, a
 * failover) means the one-shot job runs on no instance at all. The docs now say so.
 */
import { Injectable } from '@nestjs/common';
import { Timeout } from '@nestjs/schedule';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, type LockSkippedEvent } from '../../lib/index.js';
import { blockRedis } from '../support/block-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a @Timeout() with @OnOneInstance() whose owner claim comes back late', () => {
  const own = useOwnRedis();

  it('is skipped on every instance: the one-shot job runs nowhere', async () => {
    let runs = 0;
    @Injectable()
    class Warmup {
      @OnOneInstance({ ttl: 1_200 })
      @Timeout(350)
      async run(): Promise<void> {
        runs++;
      }
    }
    const apps = [await startJobApp([Warmup], { redis: own.url() }), await startJobApp([Warmup], { redis: own.url() })];
    const skips: string[] = [];
    for (const app of apps) {
      app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'skipped' && skips.push((event as LockSkippedEvent).reason));
    }
    // Redis serves nobody while both timeouts fire (350 ms after startup) and for about 550 ms
    // after: well over a sixth of the ttl (200 ms), well under the second a claim waits for its
    // reply (past it, the call fails with an error, and the job runs nowhere either).
    const { ended } = await blockRedis(own.url(), 900);
    await ended;
    await expect.poll(() => skips.sort()).toEqual(['other-owner', 'owner-uncertain']);
    // The winner kept the lease; neither instance has a timeout left to fire.
    expect(await own.redis().exists('lock:{Warmup.run:owner}')).toBe(1);
    expect(runs).toBe(0);
  }, 30_000);
});
