// docs/configuration.md:148: "`fenceRetention` | ... (at least 60000 and `ttl`; a call whose own
// `ttl`, or an `extend(ttl)`, that is longer is refused with `InvalidLockOptionsError`)", and
// configuration.md:168-170: "Every option is validated when the application starts (or when the
// call is made) and a bad one fails with an `InvalidLockOptionsError` naming the option and the
// value." docs/jobs-and-leaders.md:217: the decorators' `ttl` "... They are checked when the class
// is defined."
//
// What happens for `@LeaderElection(key, { ttl })` with a ttl above the module's fenceRetention:
// nothing fails. The decorator checks the ttl's range only (lib/decorators/leader-election.decorator.ts),
// the explorer does not compare it with fenceRetention at startup
// (lib/scheduling/lock-scheduling.explorer.ts:128-136), and the application starts. The
// election's every try (`tryAcquire(key, { ttl })`, lib/scheduling/leader-election.runner.ts:96-110)
// is then refused with InvalidLockOptionsError "ttl ... at most the module's fenceRetention",
// which the runner catches as if Redis had failed: it logs "could not try for the leadership
// (...); retrying" and tries again every ttl / 3, forever. No instance ever leads, and no error
// reaches the application. There is no caller to hand the error to, so the only place it can
// fail is startup, where the explorer has both the election's ttl and the module's fenceRetention.
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LeaderElection, RedisLockModule, WithoutOverlapping, type Lock, type OnLeadershipAcquired } from '../lib/index.js';
import { CapturedLogs } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

useRedis();

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('@LeaderElection ttl longer than the module fenceRetention', () => {
  it('is refused at startup with InvalidLockOptionsError naming ttl (not retried as a Redis failure for ever)', async () => {
    @LeaderElection('retention-leader', { ttl: '2m' })
    @Injectable()
    class RetentionLeader implements OnLeadershipAcquired {
      terms = 0;
      onLeadershipAcquired(_lock: Lock): void {
        this.terms++;
      }
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), fenceRetention: '1m' })], providers: [RetentionLeader] })
    class AppModule {}

    const logs = new CapturedLogs();
    let started: unknown;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
      closers.push(() => moduleRef.close());
      await moduleRef.init();
      started = 'started';
    } catch (error) {
      started = error;
    }
    // Today: the application starts ('started'), and its first try is refused and logged as a
    // warning ("could not try for the leadership ... fenceRetention ...; retrying").
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as InvalidLockOptionsError).option).toBe('ttl');
  });

  it('refuses a job decorator ttl above it at startup too, naming the method', async () => {
    @Injectable()
    class RetentionJob {
      @WithoutOverlapping({ ttl: '2m' })
      async run(): Promise<void> {}
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), fenceRetention: '1m' })], providers: [RetentionJob] })
    class AppModule {}
    let started: unknown;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      closers.push(() => moduleRef.close());
      await moduleRef.init();
      started = 'started';
    } catch (error) {
      started = error;
    }
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as Error).message).toMatch(/@WithoutOverlapping\(\) on RetentionJob\.run: Option "ttl"/);
  });
});
