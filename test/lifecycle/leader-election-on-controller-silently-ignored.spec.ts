import { Controller, Get } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let acquired = 0;

/** A controller that also leads (a status endpoint of the feed it runs while leader). */
@Controller('feed')
@LeaderElection('feed-controller', { ttl: 600 })
class FeedController {
  onLeadershipAcquired(): void {
    acquired++;
  }
  @Get()
  status(): string {
    return 'ok';
  }
}

/**
 * Found by review. `LockSchedulingExplorer.onModuleInit` (lib/scheduling/lock-scheduling.explorer.ts)
 * looks for `@LeaderElection` classes among `discovery.getProviders()` only, though it looks for
 * job methods among controllers and providers. A `@LeaderElection` on a controller (a singleton,
 * created by Nest like a provider) is neither run nor refused: the application starts, the
 * class never leads on any instance, and `LeadershipService.isLeader(key)` throws "no
 * @LeaderElection() with this key in this application". The library refuses every other
 * misplaced decorator at startup (a request-scoped election class, a class provided twice,
 * `@Locked` on a static method...).
 */
describe('@LeaderElection on a controller class', () => {
  useRedis();

  it('is run as on a provider, or refused at startup; not silently ignored', async () => {
    let startup: unknown;
    let outcome: { acquired: number; knownToLeadershipService: boolean } | undefined;
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], controllers: [FeedController] })
      .setLogger(new CapturedLogs())
      .compile();
    try {
      await moduleRef.init();
    } catch (error) {
      startup = error;
    }
    if (startup !== undefined) {
      expect(String((startup as Error).message)).toMatch(/FeedController/);
      return;
    }
    try {
      for (let i = 0; i < 80 && acquired === 0; i++) await sleep(25);
      let known = true;
      try {
        moduleRef.get(LeadershipService).isLeader('feed-controller');
      } catch {
        known = false;
      }
      outcome = { acquired, knownToLeadershipService: known };
    } finally {
      await moduleRef.close();
    }
    // Before the fix: { acquired: 0, knownToLeadershipService: false }.
    expect(outcome).toEqual({ acquired: 1, knownToLeadershipService: true });
  });
});
