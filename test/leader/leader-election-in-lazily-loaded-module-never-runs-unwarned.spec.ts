/**
 * Review suspicion (jobs and leaders follow-up): a `@LeaderElection` class provided by a module a
 * route loads with `LazyModuleLoader` never tries for the leadership: the elections are found as
 * the application's modules initialise, and Nest runs no lifecycle hook of a module loaded later.
 * Nothing said so (`isLeader(key)` then threw that no election had the key). A RedisLockModule
 * made so warns since 1b7f02f; the election now warns as its instance is made.
 */
import { Injectable, Module } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LeaderElection, RedisLockModule, type OnLeadershipAcquired } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('a @LeaderElection class in a module loaded with LazyModuleLoader', () => {
  const redis = useRedis();

  it('is warned about as it is made: its election never runs', async () => {
    let led = false;
    @Injectable()
    @LeaderElection('lazy-leader')
    class LazyLeader implements OnLeadershipAcquired {
      onLeadershipAcquired(): void {
        led = true;
      }
    }
    @Injectable()
    @LeaderElection('eager-leader')
    class EagerLeader {}
    const logs = new CapturedLogs();
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], providers: [EagerLeader] })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
    await app.init();
    onTestFinished(() => app.close());
    // The application's own election runs, and is not warned about.
    await expect.poll(() => redis.exists('lock:{eager-leader}')).toBe(1);
    expect(logs.lines.filter((line) => line.level === 'warn')).toEqual([]);

    @Module({ providers: [LazyLeader] })
    class LazyLeaders {}
    await app.get(LazyModuleLoader).load(() => LazyLeaders);
    const warnings = logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    // Failed: [] (and the election never ran: no lease in Redis, no hook called)
    expect(warnings).toEqual([expect.stringMatching(/^LazyLeader \(@LeaderElection\("lazy-leader"\)\) was made after the application started .*LazyModuleLoader.*never/)]);
    expect(led).toBe(false);
  });
});
