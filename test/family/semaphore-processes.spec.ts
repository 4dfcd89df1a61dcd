import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from '../support/redis-cluster.js';
import { ChaosWorker, monotonicMs } from '../chaos/support/chaos-worker.js';
import { report } from '../chaos/support/report.js';
import { redisUrl, useRedis } from '../support/redis.js';

const worker = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));
const PROCESSES = 4;
const CHAINS = 3;
const ITERATIONS = 40;
const LIMIT = 3;

type Section = [fencing: number, called: number, enqueued: number | null, start: number, end: number];

describe('semaphore across processes (needs npm run build)', () => {
  useRedis();

  it(`${PROCESSES} processes x ${CHAINS} holders, limit ${LIMIT}: never more than ${LIMIT} inside, served in order, fencing tokens increasing`, { timeout: 180_000 }, () =>
    contend('semaphore', { REDIS_URL: redisUrl() }),
  );

  it("frees a SIGKILLed holder's permit once its lease runs out, not before", { timeout: 60_000 }, async () => {
    const ttl = 2_000;
    const env = { REDIS_URL: redisUrl(), KEY: 'sem-killed', LIMIT: 2, TTL: ttl };
    const holders = [ChaosWorker.start({ ...env, MODE: 'hold' }, 'hold-0', [], worker), ChaosWorker.start({ ...env, MODE: 'hold' }, 'hold-1', [], worker)];
    const held = await Promise.all(holders.map((h) => h.next<{ acquired: number }>('acquired', 30_000)));
    const waiter = ChaosWorker.start({ ...env, MODE: 'wait' }, 'wait', [], worker);
    // Let the waiter queue (it cannot get in: both permits are held and renewed).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(waiter.lines).toHaveLength(0);
    holders[0]!.child.kill('SIGKILL');
    const killedAt = monotonicMs();
    const got = await waiter.next<{ acquired: number; at: number }>('acquired', 30_000);
    await waiter.exitsOnItsOwn();
    holders[1]!.child.kill('SIGKILL');
    await Promise.all(holders.map((h) => h.exited));
    // Not before the killed holder's last lease ran out: it counts from before that renewal was
    // sent, on the same CLOCK_MONOTONIC (a few ms for Redis's clock and its ms rounding), and not
    // from the kill, which a holder stalled by a loaded machine may have renewed long before.
    const leases = holders[0]!.lines.flatMap((line) => (line as { leaseFrom?: number }).leaseFrom ?? []);
    expect(got.at).toBeGreaterThanOrEqual(Math.max(...leases) + ttl - 5);
    expect(got.at).toBeGreaterThan(killedAt);
    expect(got.acquired).toBeGreaterThan(Math.max(...held.map((h) => h.acquired)));
  });
});

describe('semaphore across processes on a 3-master Redis Cluster (needs npm run build)', () => {
  const redisCluster = useRedisCluster();

  it(`${PROCESSES} processes x ${CHAINS} holders, limit ${LIMIT}: never more than ${LIMIT} inside, served in order`, { timeout: 180_000 }, () =>
    contend('semaphore on Cluster', { CLUSTER_NODES: JSON.stringify(redisCluster.cluster.nodes) }),
  );
});

/** Runs the contended workload on `target` and checks every guarantee on what the workers saw. */
async function contend(label: string, target: Record<string, string>): Promise<void> {
  const workers = Array.from({ length: PROCESSES }, (_, i) =>
    ChaosWorker.start({ ...target, MODE: 'contend', KEY: 'sem-contend', LIMIT, CHAINS, ITERATIONS }, `contend-${i}`, [], worker),
  );
  const results = await Promise.all(workers.map((w) => w.next<{ sections: Section[] }>('sections', 170_000)));
  await Promise.all(workers.map((w) => w.exitsOnItsOwn()));
  const sections = results.flatMap((result) => result.sections);

  // Most holders inside at once, from the CLOCK_MONOTONIC intervals (an end before a start at the same instant).
  const edges = sections.flatMap(([, , , start, end]) => [[start, 1], [end, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inside = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (inside += step));

  // Fencing tokens are handed out in grant order. A call that knew it was queued before
  // another call even started is ahead of it in the queue, so it must be granted first.
  const byToken = [...sections].sort((a, b) => a[0] - b[0]);
  let duplicates = 0;
  for (let i = 1; i < byToken.length; i++) if (byToken[i]![0] === byToken[i - 1]![0]) duplicates++;
  const queued = sections.filter((section) => section[2] !== null);
  let overtaken = 0;
  for (const a of queued) for (const b of sections) if (a[2]! < b[1] && b[0] < a[0]) overtaken++;

  report(label, { processes: PROCESSES, holders: PROCESSES * CHAINS, limit: LIMIT, acquisitions: sections.length, mostInside: most, queued: queued.length, overtaken, duplicates });
  expect(sections).toHaveLength(PROCESSES * CHAINS * ITERATIONS);
  expect(most).toBeLessThanOrEqual(LIMIT);
  // With 12 holders for 3 permits, they did share it (the test would prove nothing otherwise).
  expect(most).toBe(LIMIT);
  expect(queued.length).toBeGreaterThan(0);
  expect(overtaken).toBe(0);
  expect(duplicates).toBe(0);
}
