// docs/configuration.md: `waitForReplicas` ... "a call's own `ttl` below twice it is refused with
// `InvalidLockOptionsError`" (d263d04). docs/jobs-and-leaders.md: the decorators' `ttl` "...
// They are checked when the class is defined."; configuration.md: "Every option is validated when
// the application starts (or when the call is made)".
//
// What happens: d263d04 added the refusal to resolveLockOptions() (every call), but the startup
// check of @LeaderElection and the job decorators' ttls (lib/scheduling/lock-scheduling.explorer.ts,
// which refuses a ttl over fenceRetention "here, not at every try for the leadership (which would
// retry it for ever)") was not extended. An election whose ttl is under twice
// waitForReplicas.timeout starts without a word; each try is refused with InvalidLockOptionsError,
// which the runner logs as "could not try for the leadership (...); retrying" and retries every
// ttl / 3 for ever: no instance ever leads, and no error reaches the application. A job's lock
// (@WithoutOverlapping) is refused at every tick the same way.
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LeaderElection, LeadershipService, RedisLockModule, WithoutOverlapping, type Lock, type OnLeadershipAcquired } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

useRedis();

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a decorator ttl under twice waitForReplicas.timeout', () => {
  it('@LeaderElection: refused at startup with InvalidLockOptionsError naming ttl (not retried as a Redis failure for ever)', { timeout: 30_000 }, async () => {
    @LeaderElection('s15g-replica-leader', { ttl: '1s' })
    @Injectable()
    class ReplicaLeader implements OnLeadershipAcquired {
      terms = 0;
      onLeadershipAcquired(_lock: Lock): void {
        this.terms++;
      }
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), waitForReplicas: { replicas: 1, timeout: 1_000 } })], providers: [ReplicaLeader] })
    class AppModule {}

    const logs = new CapturedLogs();
    let started: unknown;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
      closers.push(() => moduleRef.close());
      await moduleRef.init();
      started = 'started';
      // What it does instead: every try is refused for the option, and logged as if Redis failed.
      await expect
        .poll(() => logs.lines.filter((line) => line.level === 'warn' && /could not try for the leadership .*"ttl"/.test(String(line.message))).length, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(2);
      expect(moduleRef.get(LeadershipService).isLeader('s15g-replica-leader')).toBe(false);
      started = `started; warned: ${logs.lines.find((line) => line.level === 'warn')?.message}`;
    } catch (error) {
      started = started === 'started' ? `started, then: ${String(error)}` : error;
    }
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as InvalidLockOptionsError).option).toBe('ttl');
    expect((started as Error).message).toMatch(/@LeaderElection\(\) on ReplicaLeader/);
  });

  it('@WithoutOverlapping: refused at startup too, naming the method', { timeout: 30_000 }, async () => {
    @Injectable()
    class ReplicaJob {
      @WithoutOverlapping({ ttl: '1s' })
      async run(): Promise<void> {}
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), waitForReplicas: { replicas: 1, timeout: 1_000 } })], providers: [ReplicaJob] })
    class AppModule {}
    let started: unknown;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      closers.push(() => moduleRef.close());
      await moduleRef.init();
      started = 'started';
      // What it does instead: every call (every tick) is refused, naming neither the decorator nor the method.
      const call = await moduleRef.get(ReplicaJob).run().then(() => 'ran', (error: Error) => `${error.name}: ${error.message}`);
      started = `started; each call: ${call}`;
    } catch (error) {
      started = started === undefined ? error : `${String(started)}, then: ${String(error)}`;
    }
    expect(started).toBeInstanceOf(InvalidLockOptionsError);
    expect((started as Error).message).toMatch(/@WithoutOverlapping\(\) on ReplicaJob\.run: Option "ttl"/);
  });
});
