/**
 * Found by review (twenty-ninth session): two different provider classes that happen to share a name (a `ReportsService` in an
 * admin module and another in a public module, each with a `@WithoutOverlapping()` method `run`)
 * get the same default key, and the startup fails as it should, but the DuplicateLockKeyError
 * names the same thing twice: `Lock key "ReportsService.run" is used by both ReportsService.run
 * (@WithoutOverlapping) and ReportsService.run (@WithoutOverlapping)`. It reads as one method
 * clashing with itself; nothing says which two classes (or modules) to look at, nor that the
 * module option `jobNamespace` does not help (the two share one application). The explorer adds
 * the provider's token only when one class is provided twice (lib/scheduling/lock-scheduling.explorer.ts,
 * `provider` in findJobsAndElections), not when two classes have one name. The same holds for two
 * `@LeaderElection` classes of one name with one election key.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { DuplicateLockKeyError, LeaderElection, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

function reportsClass() {
  @Injectable()
  class ReportsService {
    @WithoutOverlapping()
    async run(): Promise<void> {}
  }
  return ReportsService;
}

function feedClass() {
  @LeaderElection('feed')
  @Injectable()
  class FeedService {}
  return FeedService;
}

async function startupError(admin: Function, published: Function): Promise<unknown> {
  @Module({ providers: [admin as never] })
  class AdminModule {}
  @Module({ providers: [published as never] })
  class PublicModule {}
  @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), AdminModule, PublicModule] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
  const error = await moduleRef.init().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  await moduleRef.close().catch(() => undefined);
  return error;
}

describe('two different classes of one name with job methods of one name', () => {
  useRedis();

  it('are told apart in the DuplicateLockKeyError', async () => {
    const error = await startupError(reportsClass(), reportsClass());
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    const { first, second, message } = error as DuplicateLockKeyError;
    // Was: both 'ReportsService.run (@WithoutOverlapping)'.
    expect(first).toBe('ReportsService.run (@WithoutOverlapping, in AdminModule)');
    expect(second).toBe('ReportsService.run (@WithoutOverlapping, in PublicModule)');
    expect(message).toContain('Two different classes are named ReportsService: give one of them another key.');
  });

  it('are told apart for two @LeaderElection classes of one name and key', async () => {
    const error = await startupError(feedClass(), feedClass());
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    const { first, second, message } = error as DuplicateLockKeyError;
    // Was: both 'FeedService (@LeaderElection)'.
    expect(first).toBe('FeedService (@LeaderElection, in AdminModule)');
    expect(second).toBe('FeedService (@LeaderElection, in PublicModule)');
    expect(message).toContain('Two different classes are named FeedService');
  });
});
