import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChaosWorker } from '../chaos/support/chaos-worker.js';
import { report } from '../chaos/support/report.js';
import { redisUrl, useRedis } from '../support/redis.js';

const worker = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));
const PROCESSES = 4;
const CHAINS = 3;
const ITERATIONS = 40;

type Section = [mode: 'read' | 'write', fencing: number, called: number, enqueued: number | null, start: number, end: number];

describe('read-write locks across processes (needs npm run build)', () => {
  const redis = useRedis();

  it(`${PROCESSES} processes x ${CHAINS} chains, mixed readers and writers: writers alone, readers share, FIFO over both`, { timeout: 180_000 }, async () => {
    const workers = Array.from({ length: PROCESSES }, (_, i) =>
      ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'rw', KEY: 'rw-mixed', CHAINS, ITERATIONS, READS: 7 }, `rw-${i}`, [], worker),
    );
    const results = await Promise.all(workers.map((w) => w.next<{ sections: Section[]; violations: number }>('sections', 170_000)));
    await Promise.all(workers.map((w) => w.exitsOnItsOwn()));
    const sections = results.flatMap((result) => result.sections);
    const violations = results.reduce((sum, result) => sum + result.violations, 0);
    const writes = sections.filter(([mode]) => mode === 'write');

    // A writer overlaps nothing; readers do overlap each other (on CLOCK_MONOTONIC intervals).
    let writerOverlaps = 0;
    for (const w of writes) for (const other of sections) if (other !== w && other[4] < w[5] && w[4] < other[5]) writerOverlaps++;
    const reads = sections.filter(([mode]) => mode === 'read').sort((a, b) => a[4] - b[4]);
    let readerOverlaps = 0;
    for (let i = 1; i < reads.length; i++) if (reads[i]![4] < reads[i - 1]![5]) readerOverlaps++;

    // FIFO over both kinds, by fencing tokens (handed out in grant order): a call that knew it
    // was queued before another call started is let in first.
    const queued = sections.filter((section) => section[3] !== null);
    let overtaken = 0;
    for (const a of queued) for (const b of sections) if (a[3]! < b[2] && b[1] < a[1]) overtaken++;
    // Reader turns a waiting writer saw: readers let in between its joining the queue and its turn.
    let mostReaderTurns = 0;
    for (const w of writes.filter((section) => section[3] !== null)) {
      mostReaderTurns = Math.max(mostReaderTurns, reads.filter((r) => r[4] > w[3]! && r[4] < w[4]).length);
    }
    const counter = Number(await redis.get('rw-mixed:counter'));
    report('read-write', { processes: PROCESSES, calls: sections.length, writes: writes.length, counter, violations, writerOverlaps, readerOverlaps, overtaken, mostReaderTurns });
    expect(sections).toHaveLength(PROCESSES * CHAINS * ITERATIONS);
    expect(counter).toBe(writes.length);
    expect(violations).toBe(0);
    expect(writerOverlaps).toBe(0);
    expect(readerOverlaps).toBeGreaterThan(0);
    expect(overtaken).toBe(0);
    // Only readers already queued ahead of it: at most one per other chain.
    expect(mostReaderTurns).toBeLessThan(PROCESSES * CHAINS);
  });
});
