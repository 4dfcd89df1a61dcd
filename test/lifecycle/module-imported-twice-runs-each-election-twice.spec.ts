import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let acquiredHooks = 0;

@Injectable()
@LeaderElection('reports', { ttl: 600 })
class ReportsLeader {
  onLeadershipAcquired(): void {
    acquiredHooks++;
  }
}

/** A cron of the feature module, guarded as docs/jobs-and-leaders.md shows ("Am I the leader?"). */
@Injectable()
class FeatureReports {
  constructor(readonly leadership: LeadershipService) {}
}

/** A consumer in the root module (LeadershipService of the global RedisLockModule). */
@Injectable()
class RootReports {
  constructor(readonly leadership: LeadershipService) {}
}

// A feature module (a shared library module, say) that imports the lock module itself, while the
// application also imports it globally: Nest builds two RedisLockModule instances.
@Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [ReportsLeader, FeatureReports], exports: [FeatureReports] })
class FeatureModule {}

/**
 * Found by review. With `RedisLockModule` imported twice in one application (the global import
 * and a feature module's own), each instance has its own `LockSchedulingExplorer`, and each
 * discovers every provider of the whole application (`DiscoveryService` is application-wide,
 * lib/scheduling/lock-scheduling.explorer.ts `onModuleInit`). So each runs its own
 * `LeaderElectionRunner` for the same `@LeaderElection` instance: the application competes with
 * itself for its own leadership, the loser retrying every ttl/3 for ever, and each module's
 * `LeadershipService` knows only its own runner. Whichever wins, the other module's
 * `isLeader()`/`leaderLock()` says "not the leader" while this process leads: a cron guarded by
 * `leaderLock()` (the pattern of docs/jobs-and-leaders.md) may then never run on any instance.
 * Nothing warns or refuses at startup, though a class provided twice (two runners for one
 * election) is refused with DuplicateLockKeyError.
 */
describe('RedisLockModule imported twice in one application, with a @LeaderElection', () => {
  useRedis();

  it('runs the election once, or refuses at startup; never lets a LeadershipService deny a leadership this process holds', async () => {
    let moduleRef: TestingModule;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), FeatureModule],
        providers: [RootReports],
      })
        .setLogger(new CapturedLogs())
        .compile();
      await moduleRef.init();
    } catch (startup) {
      // Refusing the double import at startup is a fine answer too, as long as it says why.
      expect(String((startup as Error).message)).toMatch(/RedisLockModule/);
      return;
    }
    let answers: { root: boolean; feature: boolean };
    try {
      for (let i = 0; i < 200 && acquiredHooks === 0; i++) await sleep(25);
      expect(acquiredHooks).toBe(1);
      answers = {
        root: moduleRef.get(RootReports).leadership.isLeader('reports'),
        feature: moduleRef.get(FeatureReports).leadership.isLeader('reports'),
      };
    } finally {
      await moduleRef.close();
    }
    // Before the fix: one of the two is false ({ root: true, feature: false } or the reverse), by a race.
    expect(answers).toEqual({ root: true, feature: true });
  });
});
