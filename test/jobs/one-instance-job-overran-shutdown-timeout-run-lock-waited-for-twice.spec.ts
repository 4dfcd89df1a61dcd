/**
 * Found by review (thirty-fifth session). A job run still going after the job phase's
 * shutdownTimeout is "not waited for again" (docs/configuration.md) and "its locks are given back
 * while it runs" (docs/jobs-and-leaders.md). test/lifecycle/job-overran-shutdown-timeout-run-lock-held-again-two-thirds.spec.ts
 * pins that for `@WithoutOverlapping()` alone. With `@OnOneInstance()` on the method too (the
 * docs' own example), the run lock runs inside the owner lease's handle, and the job phase tells
 * the calls within the run's locks to stop (`interruptCallsWithin([ownerInRun, run])`): the run
 * lock itself counted as such a call, was marked as told early, and LockService's own phase
 * waited for the run another two thirds of shutdownTimeout before giving its run lock back.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('app.close() with an @OnOneInstance() @WithoutOverlapping() job that ignores its signal past shutdownTimeout', () => {
  const redis = useRedis();

  it('gives the run lock back once the job phase gave up on it, as for @WithoutOverlapping() alone', { timeout: 20_000 }, async () => {
    @Injectable()
    class DeafOwner {
      started = false;
      @OnOneInstance({ ttl: '60s' })
      @WithoutOverlapping()
      async run(): Promise<void> {
        this.started = true;
        await new Promise(() => undefined);
      }
    }
    const app = await startJobApp([DeafOwner], { shutdownTimeout: 3_000 });
    void app.get<DeafOwner>(DeafOwner).run();
    await expect.poll(() => app.get<DeafOwner>(DeafOwner).started).toBe(true);
    expect(await redis.exists('lock:{DeafOwner.run}')).toBe(1);
    expect(await redis.exists('lock:{DeafOwner.run:owner}')).toBe(1);
    const closing = app.close();
    await expect.poll(() => app.logs.has('warn', 'DeafOwner.run was still running 3000 ms'), { timeout: 5_000 }).toBe(true);
    // A round trip later both locks are gone: the lease handed back, the run lock given back by
    // LockService's phase without waiting for the run again.
    await sleep(500);
    expect(await redis.exists('lock:{DeafOwner.run:owner}')).toBe(0);
    // Failed: the run lock was kept until two thirds of shutdownTimeout (2 s) after the job phase ended.
    expect(await redis.exists('lock:{DeafOwner.run}')).toBe(0);
    await closing;
  });
});
