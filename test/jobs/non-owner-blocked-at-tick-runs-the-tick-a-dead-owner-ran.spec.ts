/**
 * Found by review (forty-first session): a claim of the `@OnOneInstance()` owner lease that took it
 * over from another instance counts for its tick only if it came back within a sixth of the ttl,
 * so that a claim held up while the owner ran that very tick (and then lost its lease) does not
 * run it again. The clock started at the call: an instance whose event loop was blocked when the
 * tick fell due calls late, after the owner ran the tick and died and its lease ran out; its claim
 * came back at once, and it ran the same tick again (docs/jobs-and-leaders.md: each tick runs
 * once across instances).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { startWorkers, tick, type Worker } from '../support/schedule-workers.js';

describe('an instance whose event loop was blocked when a tick fell due, the owner having run it and died', () => {
  const redis = useRedis();
  let workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
  });

  it('does not run that tick again once the dead owner\'s lease ran out', async () => {
    const ttl = 1_500;
    workers = await startWorkers(3, { REDIS_URL: redisUrl(), MODE: 'job', TTL: String(ttl) });
    const first = await tick(workers, 1);
    expect(first.ran).toHaveLength(1);
    const owner = first.ran[0]!;
    await owner.waitFor((line) => line.event === 'released' && line.tick === 1);
    const [late, other] = workers.filter((worker) => worker !== owner) as [Worker, Worker];
    const gate = join(tmpdir(), `schedule-stall-${process.pid}-${late.pid}`);
    rmSync(gate, { force: true });
    const mark = late.lines.length;
    late.send(`stall 2 ${gate}`);
    try {
      await late.waitFor((line) => line.event === 'blocking', 10_000, mark);
      // Tick 2 falls due everywhere; the owner runs it, the third instance skips it.
      const second = await tick([owner, other], 2);
      expect(second.ran).toEqual([owner]);
      await owner.waitFor((line) => line.event === 'released' && line.tick === 2);
      owner.signal('SIGKILL');
      await owner.exited;
      // The dead owner's lease runs out (its ttl at most).
      await expect.poll(() => redis.exists('lock:{ExportJob.export:owner}'), { timeout: ttl + 10_000 }).toBe(0);
    } finally {
      writeFileSync(gate, '');
    }
    // Its tick 2 fires as its event loop runs again.
    const woke = await late.waitFor((line) => line.tick === 2 && (line.event === 'start' || line.event === 'skipped'), 10_000, mark);
    rmSync(gate, { force: true });
    const starts = workers.flatMap((worker) => worker.lines.filter((line) => line.event === 'start' && line.tick === 2));
    // Was: 'start', tick 2 run on two instances.
    expect({ woke: woke.event, starts: starts.length }).toEqual({ woke: 'skipped', starts: 1 });
  }, 60_000);
});
