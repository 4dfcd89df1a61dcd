import { afterEach, describe, it } from 'vitest';
import { redisUrl, useRedis } from './support/redis.js';
import { scheduleScenarios } from './support/schedule-scenarios.js';
import type { Worker } from './support/schedule-workers.js';

describe('scheduled jobs and leaders across three processes on one Redis (real @nestjs/schedule)', () => {
  useRedis();
  let workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
  });
  const scenarios = scheduleScenarios(() => ({ REDIS_URL: redisUrl() }), (started) => workers.push(...started));

  describe('@OnOneInstance() + @WithoutOverlapping() on an @Cron job', () => {
    it('runs exactly once per tick, on the instance that took the lease', () => scenarios.exactlyOncePerTick(), 60_000);
    it('skips later ticks on every instance while a long run goes on, and runs the first tick after it', () => scenarios.longRunSkipsLaterTicks(), 60_000);
    it('moves the job to another instance after the ttl when the owner is killed', () => scenarios.ownerKilledMovesTheJob(1_500), 60_000);
    it('hands the job over at the next tick when the owner shuts down cleanly, after its run', () => scenarios.cleanShutdownHandsOver(), 60_000);
    it('never runs a tick on an owner lease that expired while the owner was blocked (another instance ran it)', () => scenarios.pausedOwnerRunsNoExpiredTick(1_500), 60_000);
  });

  describe('@LeaderElection', () => {
    it('has exactly one leader', () => scenarios.oneLeader(1_500), 60_000);
    it('elects another within the ttl when the leader is killed', () => scenarios.leaderKilled(1_500), 60_000);
    it('elects another with a higher fencing token when the leader is paused past its ttl; the paused one learns it on waking', () => scenarios.leaderPaused(1_500), 60_000);
    it('hands over at the others\' next try when the leader closes', () => scenarios.leaderClosed(), 60_000);
  });
});
