import { afterEach, beforeEach, describe, it } from 'vitest';
import { useRedisCluster } from '../support/redis-cluster.js';
import { scheduleScenarios } from '../support/schedule-scenarios.js';
import type { Worker } from '../support/schedule-workers.js';

describe('scheduled jobs and leaders across three processes on a Redis Cluster (3 masters)', () => {
  const redisCluster = useRedisCluster();
  let workers: Worker[] = [];

  beforeEach(async () => {
    await Promise.all(redisCluster.admin.nodes('master').map((node) => node.flushall()));
  });
  afterEach(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
  });

  const scenarios = scheduleScenarios(
    () => ({ CLUSTER_NODES: JSON.stringify(redisCluster.cluster.nodes) }),
    (started) => workers.push(...started),
  );

  it('runs an @OnOneInstance() + @WithoutOverlapping() job exactly once per tick', () => scenarios.exactlyOncePerTick(), 60_000);
  it('moves the job to another instance after the ttl when its owner is killed', () => scenarios.ownerKilledMovesTheJob(1_500), 60_000);
  it('elects another leader within the ttl when the leader is killed, and then has exactly one', () => scenarios.leaderKilled(1_500), 60_000);
  it('elects another when the leader is paused past its ttl; the paused one learns it on waking', () => scenarios.leaderPaused(1_500), 60_000);
});
