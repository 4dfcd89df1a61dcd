// docs/jobs-and-leaders.md: the decorators' `ttl` "... They are checked when the class is
// defined."; docs/configuration.md: "Every option is validated when the application starts (or
// when the call is made) and a bad one fails with an `InvalidLockOptionsError` naming the option
// and the value": `fenceRetention` is "at least 60000 and `ttl`", and under `waitForReplicas` "a
// call's own `ttl` below twice it is refused".
//
// What happened: the decorators checked the ttl's range only, and the startup check
// (lib/scheduling/lock-scheduling.explorer.ts) did not compare it with the module's
// fenceRetention or waitForReplicas.timeout. The application started; every try of the election
// (`tryAcquire(key, { ttl })`) was then refused with InvalidLockOptionsError, which the runner
// logged as a Redis failure ("could not try for the leadership (...); retrying") and retried
// every ttl / 3 for ever: no instance ever led, and no error reached the application. A job's
// lock was refused at every tick, naming neither the decorator nor the method. There is no caller
// to hand the error to, so startup is where it must fail.
import { Injectable, Module, type Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LeaderElection, RedisLockModule, WithoutOverlapping, type Lock, type OnLeadershipAcquired, type RedisLockModuleOptions } from '../../lib/index.js';
import type { Duration } from '../../lib/core/time/duration.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

useRedis();

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** What an application with `provider` and the module on `options` started with: 'started', or its error. */
async function startup(provider: Type, options: Partial<RedisLockModuleOptions>): Promise<unknown> {
  @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ...options })], providers: [provider] })
  class AppModule {}
  try {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    closers.push(() => moduleRef.close());
    await moduleRef.init();
    return 'started';
  } catch (error) {
    return error;
  }
}

function leaderWithTtl(key: string, ttl: Duration): Type {
  @LeaderElection(key, { ttl })
  @Injectable()
  class TtlLeader implements OnLeadershipAcquired {
    onLeadershipAcquired(_lock: Lock): void {}
  }
  return TtlLeader;
}

function jobWithTtl(ttl: Duration): Type {
  @Injectable()
  class TtlJob {
    @WithoutOverlapping({ ttl })
    async run(): Promise<void> {}
  }
  return TtlJob;
}

describe.each([
  { limit: 'longer than the module fenceRetention', ttl: '2m', options: { fenceRetention: '1m' } },
  { limit: 'under twice waitForReplicas.timeout', ttl: '1s', options: { waitForReplicas: { replicas: 1, timeout: 1_000 } } },
] as const)('a decorator ttl $limit', ({ ttl, options }) => {
  it('@LeaderElection: refused at startup with InvalidLockOptionsError naming ttl and the class (not retried as a Redis failure for ever)', { timeout: 30_000 }, async () => {
    const started = await startup(leaderWithTtl(`ttl-leader-${ttl}`, ttl), options);
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as InvalidLockOptionsError).option).toBe('ttl');
    expect((started as Error).message).toMatch(/@LeaderElection\(\) on TtlLeader/);
  });

  it('@WithoutOverlapping: refused at startup too, naming the method', { timeout: 30_000 }, async () => {
    const started = await startup(jobWithTtl(ttl), options);
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as Error).message).toMatch(/@WithoutOverlapping\(\) on TtlJob\.run: Option "ttl"/);
  });
});
