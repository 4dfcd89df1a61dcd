import { Redis } from 'ioredis';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChaosWorker, monotonicMs } from './chaos/support/chaos-worker.js';
import { report } from './chaos/support/report.js';
import { startPostgresServer, type PostgresServer } from './support/postgres-server.js';
import { redisUrl, useRedis } from './support/redis.js';

const workerScript = fileURLToPath(new URL('./fixtures/fencing-worker.mjs', import.meta.url));
const WORKERS = 3;
const PAUSES = 3;
const TTL = 500;
/** A pause three leases long: the lock expires and the others take it and write meanwhile. */
const PAUSE_MS = 3 * TTL;

interface Writing {
  writing: number;
  token: number;
  at: number;
}
interface Wrote {
  wrote: number;
  outcome: 'ok' | 'refused';
  at: number;
}

/**
 * Three worker processes increment one counter under one lock (fenced: each increment's read
 * claims the counter with the lock's token and its write carries it; a refused read or write
 * counts as refused, not acknowledged). PAUSES times, a worker is frozen (SIGSTOP) the moment it
 * says its write is on its way, for three leases, while the others take the lock and write; then
 * thawed (SIGCONT), its write lands late. A pause counts when that write landed after the thaw
 * and another worker wrote during the pause. Lost updates: increments the workers were told
 * succeeded, minus the counter's final value.
 */
async function pausedWriters(env: Record<string, string>, readCounter: () => Promise<number>) {
  const workers = Array.from({ length: WORKERS }, (_, i) => ChaosWorker.start({ ...env, TTL }, `fencing-${i}`, [], workerScript));
  try {
    await Promise.all(workers.map((worker) => worker.next('ready', 60_000)));
    const writes = (worker: ChaosWorker) => worker.lines.filter((line): line is Wrote => typeof line === 'object' && line !== null && 'wrote' in line);
    let pauses = 0;
    let attempts = 0;
    let lateRefused = 0;
    let lateAccepted = 0;
    while (pauses < PAUSES) {
      if (++attempts > PAUSES * 5) throw new Error(`only ${pauses} of ${PAUSES} pauses landed between a check and its write in ${attempts - 1} attempts`);
      // The next write to go out, from whichever worker holds the lock now.
      const [victim, writing] = await Promise.race(
        workers.map(async (worker) => {
          const seen = worker.lines.length;
          const line = await nextAfter<Writing>(worker, 'writing', seen);
          return [worker, line] as const;
        }),
      );
      victim.child.kill('SIGSTOP');
      const stoppedAt = monotonicMs();
      const othersBefore = workers.filter((w) => w !== victim).reduce((sum, w) => sum + writes(w).length, 0);
      await sleep(PAUSE_MS);
      // The others took the lock and wrote while the victim was frozen.
      for (const until = monotonicMs() + 20_000; workers.filter((w) => w !== victim).reduce((sum, w) => sum + writes(w).length, 0) === othersBefore; await sleep(50)) {
        if (monotonicMs() > until) throw new Error('no other worker wrote while one was frozen');
      }
      const resumedAt = monotonicMs();
      victim.child.kill('SIGCONT');
      let wrote: Wrote | undefined;
      for (const until = monotonicMs() + 20_000; (wrote = writes(victim).find((line) => line.wrote === writing.writing)) === undefined; await sleep(10)) {
        if (monotonicMs() > until) throw new Error(`the thawed worker did not finish write ${writing.writing}: ${victim.stderrText}`);
      }
      if (wrote.at < resumedAt || writing.at > stoppedAt) continue; // the stop came after the write: not a late write
      pauses++;
      if (wrote.outcome === 'refused') lateRefused++;
      else lateAccepted++;
    }
    for (const worker of workers) worker.send('stop');
    const done = await Promise.all(workers.map((worker) => worker.next<{ done: { acked: number; refused: number } }>('done', 60_000)));
    await Promise.all(workers.map((worker) => worker.exitsOnItsOwn(10_000)));
    const acked = done.reduce((sum, { done: d }) => sum + d.acked, 0);
    const refused = done.reduce((sum, { done: d }) => sum + d.refused, 0);
    const final = await readCounter();
    return { pauses, attempts, lateRefused, lateAccepted, acked, refused, final, lostUpdates: acked - final };
  } finally {
    for (const worker of workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill('SIGCONT');
        worker.child.kill('SIGKILL');
      }
    }
  }
}

/** The first line with `field` printed after the first `skip` lines. */
async function nextAfter<T>(worker: ChaosWorker, field: string, skip: number): Promise<T> {
  for (const until = monotonicMs() + 30_000; monotonicMs() < until; await sleep(5)) {
    const line = worker.lines.slice(skip).find((l): l is T => typeof l === 'object' && l !== null && field in l);
    if (line) return line;
  }
  throw new Error(`no "${field}" line within 30 s: ${worker.stderrText}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos: holders frozen (SIGSTOP) while their write is on its way, across processes', () => {
  useRedis();
  let postgres: PostgresServer;
  let db: pg.Pool;
  beforeAll(async () => {
    postgres = await startPostgresServer();
    db = new pg.Pool({ connectionString: postgres.url });
    db.on('error', () => undefined); // a client still closing when the server stops at teardown (57P01)
    await db.query('CREATE TABLE counters (id text PRIMARY KEY, value bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await postgres?.stop();
  });
  let redis: Redis | undefined;
  afterEach(() => {
    redis?.disconnect();
    redis = undefined;
  });

  const resources = {
    postgres: {
      env: () => ({ RESOURCE: 'postgres', DATABASE_URL: postgres.url }),
      reset: async () => {
        await db.query("DELETE FROM counters; INSERT INTO counters (id, value) VALUES ('fencing-chaos', 0)");
      },
      read: async () => Number((await db.query("SELECT value FROM counters WHERE id = 'fencing-chaos'")).rows[0].value),
    },
    redis: {
      env: () => ({ RESOURCE: 'redis' }),
      reset: async () => undefined, // the database is flushed before each test
      read: async () => Number((await (redis ??= new Redis(redisUrl())).get('fencing-chaos:counter')) ?? '0'),
    },
  };

  describe.each(['postgres', 'redis'] as const)('the counter in %s', (name) => {
    const resource = resources[name];

    it(`with fenced writes and claiming reads: ${PAUSES} late writes, each refused; 0 lost updates`, { timeout: 120_000 }, async () => {
      await resource.reset();
      const result = await pausedWriters({ REDIS_URL: redisUrl(), FENCED: '1', ...resource.env() }, resource.read);
      report(`fencing-${name}-fenced`, result);
      expect(result.pauses).toBe(PAUSES);
      expect(result.lateRefused).toBe(PAUSES);
      expect(result.lostUpdates).toBe(0);
      expect(result.final).toBe(result.acked);
    });

    it(`without fencing (the test bites): the same late writes are accepted and updates are lost`, { timeout: 120_000 }, async () => {
      await resource.reset();
      const result = await pausedWriters({ REDIS_URL: redisUrl(), FENCED: '0', ...resource.env() }, resource.read);
      report(`fencing-${name}-unfenced`, result);
      expect(result.pauses).toBe(PAUSES);
      expect(result.lateAccepted).toBe(PAUSES);
      expect(result.refused).toBe(0);
      // Each late write put back a value read before the pause, over at least one other increment.
      expect(result.lostUpdates).toBeGreaterThanOrEqual(PAUSES);
    });
  });
});
