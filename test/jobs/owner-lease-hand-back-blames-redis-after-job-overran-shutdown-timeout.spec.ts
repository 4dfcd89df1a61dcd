import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, OnOneInstance, WithoutOverlapping, type OnLeadershipAcquired } from '../../lib/index.js';
import { FaultProxy } from '../../explore/real/fault-proxy.mjs';
import { redisUrl, useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// JobLockOrchestrator.onModuleDestroy and LeaderElectionRunner.stop give the running work and the
// lease's release one shutdownTimeout together. When a job (or a leader's hook) ignores its
// signal, the wait for it uses all of it, and the release is then awaited for 0 ms: it always
// "times out", and the library warns that Redis did not answer ("no answer from Redis within
// shutdownTimeout ... it expires on its own") while Redis is healthy and answers in 20 ms, and
// the lease is in fact released a moment later by LockService. An operator reading this goes
// looking for a Redis outage that never happened. (On loopback the 0 ms timer races a sub-ms
// reply, so the warning comes and goes; a 20 ms network delay makes it come every time.)
describe('app.close() while the work ignores its signal past shutdownTimeout, Redis healthy (20 ms away)', () => {
  const redis = useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  async function throughProxy(): Promise<string> {
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    return url.toString();
  }

  const blamesRedis = (lines: { message: string }[]) => lines.filter((line) => line.message.includes('no answer from Redis')).map((line) => line.message);

  it('@OnOneInstance job: does not claim that Redis did not answer the hand-back', async () => {
    @Injectable()
    class Deaf {
      started = false;
      @OnOneInstance({ ttl: '60s' })
      @WithoutOverlapping()
      async run(): Promise<void> {
        this.started = true;
        await new Promise(() => undefined);
      }
    }
    const app = await startJobApp([Deaf], { redis: await throughProxy(), shutdownTimeout: 300 });
    void app.get<Deaf>(Deaf).run();
    await expect.poll(() => app.get<Deaf>(Deaf).started).toBe(true);
    proxy!.delay(10);
    await app.close();
    expect(app.logs.has('warn', 'Deaf.run was still running 300 ms')).toBe(true);
    // Redis answered: the lease is gone when close() settles, not left to expire.
    expect(await redis.exists('lock:{Deaf.run:owner}')).toBe(0);
    // Fails: 'Could not hand the lease "Deaf.run:owner" back (no answer from Redis within shutdownTimeout, 300 ms); it expires on its own.'
    expect(blamesRedis(app.logs.lines)).toEqual([]);
  });

  it('@LeaderElection whose hook ignores its signal: does not claim that Redis did not answer the release', async () => {
    let started = false;
    @LeaderElection('deaf-leader', { ttl: '60s' })
    @Injectable()
    class DeafLeader implements OnLeadershipAcquired {
      async onLeadershipAcquired(): Promise<void> {
        started = true;
        await new Promise(() => undefined);
      }
    }
    const app = await startJobApp([DeafLeader], { redis: await throughProxy(), shutdownTimeout: 300 });
    await expect.poll(() => started).toBe(true);
    proxy!.delay(10);
    await app.close();
    expect(app.logs.has('warn', 'The hooks of DeafLeader were still running 300 ms')).toBe(true);
    expect(await redis.exists('lock:{deaf-leader}')).toBe(0);
    // Fails: 'DeafLeader could not release the leadership "deaf-leader" (no answer from Redis within shutdownTimeout, 300 ms); it expires on its own.'
    expect(blamesRedis(app.logs.lines)).toEqual([]);
  });
});
