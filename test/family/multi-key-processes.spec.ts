import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from '../support/redis-cluster.js';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { ChaosWorker } from '../chaos/support/chaos-worker.js';
import { report } from '../chaos/support/report.js';
import { redisUrl, useRedis } from '../support/redis.js';

const worker = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));
const PROCESSES = 4;
const CHAINS = 3;
const ITERATIONS = 50;
const ACCOUNTS = 10;
const START = 1_000;

/** 4 processes move money between 10 accounts in random directions; checks every call ends and the total stays. */
async function transfers(label: string, data: Redis | Cluster, target: Record<string, string>): Promise<void> {
  const names = Array.from({ length: ACCOUNTS }, (_, i) => `balance:${i}`);
  for (const name of names) await data.set(name, String(START));
  const workers = Array.from({ length: PROCESSES }, (_, i) =>
    ChaosWorker.start({ ...target, MODE: 'transfer', ACCOUNTS, CHAINS, ITERATIONS, TTL: 5_000 }, `transfer-${i}`, [], worker),
  );
  const results = await Promise.all(workers.map((w) => w.next<{ transfers: number }>('transfers', 170_000)));
  await Promise.all(workers.map((w) => w.exitsOnItsOwn()));
  const balances = await Promise.all(names.map(async (name) => Number(await data.get(name))));
  const total = balances.reduce((sum, balance) => sum + balance, 0);
  const done = results.reduce((sum, result) => sum + result.transfers, 0);
  report(label, { processes: PROCESSES, chains: PROCESSES * CHAINS, accounts: ACCOUNTS, transfers: done, total, expected: ACCOUNTS * START });
  expect(done).toBe(PROCESSES * CHAINS * ITERATIONS);
  expect(total).toBe(ACCOUNTS * START);
  // The test would prove little if nothing had moved.
  expect(balances.some((balance) => balance !== START)).toBe(true);
}

describe('multi-key locks across processes (needs npm run build)', () => {
  const redis = useRedis();

  it(`${PROCESSES} processes transferring between ${ACCOUNTS} accounts in random directions: total conserved, no deadlock`, { timeout: 180_000 }, () =>
    transfers('multi-key transfers', redis, { REDIS_URL: redisUrl() }),
  );
});

describe('multi-key locks across processes on a 3-master Redis Cluster (needs npm run build)', () => {
  const redisCluster = useRedisCluster();

  it(`${PROCESSES} processes transferring between ${ACCOUNTS} accounts in different slots`, { timeout: 180_000 }, async () => {
    const slots = new Set(Array.from({ length: ACCOUNTS }, (_, i) => clusterSlot(`lock:{account:${i}}`)));
    expect(slots.size).toBeGreaterThan(1);
    await transfers('multi-key transfers on Cluster', redisCluster.admin, { CLUSTER_NODES: JSON.stringify(redisCluster.cluster.nodes) });
  });
});
