import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (decorators, s28). docs/locks.md "Where": "With two `RedisLockModule.forRoot()` in one
 * application (a feature module importing its own), each gets the one its module sees". A
 * `@Locked` method's own `ttl` is checked at startup against the module's `fenceRetention` and
 * `waitForReplicas` (lib/scheduling/lock-scheduling.explorer.ts, findJobsAndElections): but every
 * module's explorer checks every provider of the application against its own options, whether or
 * not the provider uses that module's LockService (`seenBy` is only consulted to hand the service
 * out). A provider that locks through the global module (no fenceRetention) is refused at startup
 * because a feature module it never uses keeps its fencing counters for a minute.
 */
@Injectable()
class Reports {
  /** Locks through the global module (keyPrefix 'global:', counters kept forever). */
  @Locked('s28-report', { ttl: '5m' })
  async build(): Promise<string> {
    return 'built';
  }
}

@Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: 'feature:', fenceRetention: '1m' })] })
class FeatureModule {}

describe('a @Locked ttl with two RedisLockModule instances', () => {
  useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it("is checked against the fenceRetention of the module whose LockService runs it, not another module's", async () => {
    const ref = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, keyPrefix: 'global:' }), FeatureModule],
      providers: [Reports],
    })
      .setLogger(new CapturedLogs())
      .compile();
    closers.push(() => ref.close());
    // Before: InvalidLockOptionsError: @Locked on Reports.build: Option "ttl" must be at most the
    // module's fenceRetention (60000 ms) ... though Reports locks under the global module.
    await ref.init();
    await expect(ref.get(Reports).build()).resolves.toBe('built');
  });
});
