import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { leaders, nextLeader, startWorkers, tick, tickUntilRun, type Worker, type WorkerLine } from './schedule-workers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The tries for the leadership that `worker` found held (its `busy` lines) from line `from` on,
 * up to `until` (received no later than it, or the worker's own line itself).
 */
function busyTries(worker: Worker, from: number, until: WorkerLine): number {
  const end = worker.lines.indexOf(until);
  const lines = end === -1 ? worker.lines.slice(from).filter((line) => line.receivedAt <= until.receivedAt) : worker.lines.slice(from, end);
  return lines.filter((line) => line.event === 'busy').length;
}

/**
 * The scenarios of issue 11, each with three application instances in separate processes;
 * `env` says where Redis is. Shared by the single-node and the cluster specs.
 */
export function scheduleScenarios(env: () => Record<string, string>, track: (workers: Worker[]) => void) {
  const start = async (mode: 'job' | 'election', ttl: number): Promise<Worker[]> => {
    const workers = await startWorkers(3, { ...env(), MODE: mode, TTL: String(ttl) });
    track(workers);
    return workers;
  };

  return {
    async exactlyOncePerTick(): Promise<void> {
      const workers = await start('job', 1_500);
      const runners = new Set<Worker>();
      for (let n = 1; n <= 6; n++) {
        const { ran, skipped } = await tick(workers, n);
        expect(ran).toHaveLength(1);
        expect(skipped).toHaveLength(2);
        runners.add(ran[0]!);
        // The next tick comes once the run lock is given back, not merely once the run ended.
        await ran[0]!.waitFor((line) => line.event === 'released' && line.tick === n);
      }
      // The first caller took the lease and kept it between ticks.
      expect(runners.size).toBe(1);
      for (const worker of workers) {
        for (const line of worker.lines.filter((l) => l.event === 'skipped')) {
          expect(line.message).toMatch(/^Skipped ExportJob\.export: another instance owns the lease "ExportJob\.export:owner"\.$/);
        }
        expect(worker.problems()).toEqual([]);
      }
    },

    async longRunSkipsLaterTicks(): Promise<void> {
      const workers = await start('job', 1_000);
      // A run of three ttls: the run lock and the lease are renewed all along.
      const first = await tick(workers, 1, 3_000);
      expect(first.ran).toHaveLength(1);
      const owner = first.ran[0]!;
      for (const n of [2, 3]) {
        await sleep(800);
        const { ran, skipped } = await tick(workers, n);
        expect(ran).toHaveLength(0);
        expect(skipped).toHaveLength(3);
      }
      // On the owner, the run lock is what skipped them.
      const ownSkip = owner.lines.find((line) => line.event === 'skipped' && line.tick === 2)!;
      expect(ownSkip.message).toContain('its run lock "ExportJob.export" is held');
      const end = await owner.waitFor((line) => line.event === 'end' && line.tick === 1, 10_000);
      expect(end.held).toBe(true);
      await owner.waitFor((line) => line.event === 'released' && line.tick === 1);
      const after = await tick(workers, 4);
      expect(after.ran).toEqual([owner]);
    },

    async ownerKilledMovesTheJob(ttl: number): Promise<void> {
      const workers = await start('job', ttl);
      const { ran } = await tick(workers, 1);
      expect(ran).toHaveLength(1);
      const owner = ran[0]!;
      await owner.waitFor((line) => line.event === 'end' && line.tick === 1);
      owner.signal('SIGKILL');
      await owner.exited;
      const survivors = workers.filter((worker) => worker !== owner);
      // The dead owner's lease still stands: nobody runs the job.
      const right = await tick(survivors, 2);
      expect(right.ran).toHaveLength(0);
      const moved = await tickUntilRun(survivors, 3, 200, ttl + 10_000);
      // Moved by the lease running out in Redis, not before: until then every survivor skipped
      // every tick because the dead owner's lease stood (`other-owner`), or, on the tick its
      // claim took the expired lease over, because that claim came back late (`owner-uncertain`),
      // or because the dead owner's run lock still stood (`held-elsewhere`: killed after its run
      // ended but before its release reached Redis, that lock may outlive the lease by a little).
      for (const worker of survivors) {
        const skips = worker.lines.filter((line) => line.event === 'skipped' && line.tick! >= 2 && line.tick! < moved.tick);
        expect(skips.length).toBeGreaterThan(0);
        for (const skip of skips) {
          expect(skip.message).toMatch(/another instance owns the lease "ExportJob\.export:owner"|its claim of the lease "ExportJob\.export:owner" came back late|its run lock "ExportJob\.export" is held/);
        }
      }
      // And it stays there (after that run ended: a tick during it would be skipped).
      await moved.worker.waitFor((line) => line.event === 'released' && line.tick === moved.tick);
      const next = await tick(survivors, moved.tick + 1);
      expect(next.ran).toEqual([moved.worker]);
    },

    async cleanShutdownHandsOver(): Promise<void> {
      const ttl = 5_000;
      const workers = await start('job', ttl);
      const { ran } = await tick(workers, 1, 800);
      const owner = ran[0]!;
      owner.send('close');
      const survivors = workers.filter((worker) => worker !== owner);
      // While the owner finishes its run, the job stays with it.
      expect((await tick(survivors, 2)).ran).toHaveLength(0);
      const closed = await owner.waitFor((line) => line.event === 'closed');
      const end = owner.lines.find((line) => line.event === 'end' && line.tick === 1);
      expect(end).toBeDefined();
      expect(end!.receivedAt).toBeLessThanOrEqual(closed.receivedAt);
      expect(await owner.exited).toBe(0);
      // Handed back, not left to run out: the owner gave its lease back before it closed, so the
      // next tick runs at once (a lease left standing would make every survivor skip it,
      // `other-owner`, until the ttl ran out).
      const handedBack = owner.lines.find((line) => line.event === 'released' && line.key === 'ExportJob.export:owner');
      expect(handedBack).toBeDefined();
      expect(handedBack!.receivedAt).toBeLessThanOrEqual(closed.receivedAt);
      const next = await tick(survivors, 3);
      expect(next.ran).toHaveLength(1);
    },

    /**
     * Issue 18, item 6: the owner's tick falls due, and its event loop is blocked past the
     * lease before the tick fires; meanwhile another instance takes the job over and runs that
     * tick. On waking, the owner must not run it too: its lease's local deadline has passed.
     */
    async pausedOwnerRunsNoExpiredTick(ttl: number): Promise<void> {
      const workers = await start('job', ttl);
      const { ran } = await tick(workers, 1);
      expect(ran).toHaveLength(1);
      const owner = ran[0]!;
      await owner.waitFor((line) => line.event === 'released' && line.tick === 1);
      const others = workers.filter((worker) => worker !== owner);
      const gate = join(tmpdir(), `schedule-wake-${process.pid}-${owner.pid}`);
      rmSync(gate, { force: true });
      const mark = owner.lines.length;
      owner.send(`block 2 ${gate}`);
      try {
        await owner.waitFor((line) => line.event === 'blocking', 10_000, mark);
        // The owner cannot renew: once its lease ran out in Redis, another instance takes tick 2.
        const until = performance.now() + ttl + 10_000;
        let outcome = await tick(others, 2);
        while (outcome.ran.length === 0 && performance.now() < until) {
          await sleep(100);
          outcome = await tick(others, 2);
        }
        expect(outcome.ran).toHaveLength(1);
        // Its run is over and its run lock given back: only the owner's lease can stop the owner now.
        await outcome.ran[0]!.waitFor((line) => line.event === 'released' && line.tick === 2);
      } finally {
        writeFileSync(gate, '');
      }
      const woke = await owner.waitFor((line) => line.tick === 2 && (line.event === 'start' || line.event === 'skipped'), 10_000, mark);
      rmSync(gate, { force: true });
      expect(woke.event).toBe('skipped');
      // Tick 2 ran once, across all instances.
      const starts = workers.flatMap((worker) => worker.lines.filter((line) => line.event === 'start' && line.tick === 2));
      expect(starts).toHaveLength(1);
    },

    async oneLeader(ttl: number): Promise<void> {
      const workers = await start('election', ttl);
      await Promise.any(workers.map((worker) => worker.waitFor((line) => line.event === 'acquired', 10_000)));
      // Two ttls later (the leader renewed, the others kept trying): still one.
      await sleep(2 * ttl);
      expect(leaders(workers)).toHaveLength(1);
      const acquisitions = workers.flatMap((worker) => worker.lines.filter((line) => line.event === 'acquired'));
      expect(acquisitions).toHaveLength(1);
      for (const worker of workers) expect(worker.problems()).toEqual([]);
    },

    async leaderKilled(ttl: number): Promise<void> {
      const workers = await start('election', ttl);
      const first = await Promise.any(workers.map((worker) => worker.waitFor((line) => line.event === 'acquired', 10_000).then((line) => ({ worker, line }))));
      await sleep(ttl / 2);
      const next = nextLeader(workers, ttl + 10_000, first.worker);
      const marks = workers.map((worker) => worker.lines.length);
      first.worker.signal('SIGKILL');
      const { worker, line } = await next;
      // Elected at the first try after the lease ran out, so within the ttl plus one retry
      // interval: the lease had at most a ttl left at the kill, and each instance tries every
      // ttl / 3 after its previous try's answer, so at most three tries, and one on its way at
      // the kill, found it held. A loaded machine makes the tries later and fewer, never more.
      workers.forEach((candidate, i) => {
        if (candidate !== first.worker) expect(busyTries(candidate, marks[i]!, line)).toBeLessThanOrEqual(4);
      });
      expect(line.fencingToken).toBeGreaterThan(first.line.fencingToken!);
      await sleep(ttl / 2);
      expect(leaders(workers)).toEqual([worker]);
    },

    async leaderPaused(ttl: number): Promise<void> {
      const workers = await start('election', ttl);
      const first = await Promise.any(workers.map((worker) => worker.waitFor((line) => line.event === 'acquired', 10_000).then((line) => ({ worker, line }))));
      const paused = first.worker;
      const next = nextLeader(workers, ttl + 10_000, paused);
      paused.signal('SIGSTOP');
      const { line } = await next;
      expect(line.fencingToken).toBeGreaterThan(first.line.fencingToken!);
      await sleep(ttl / 2);
      const mark = paused.lines.length;
      paused.signal('SIGCONT');
      const lost = await paused.waitFor((l) => l.event === 'lost', 10_000, mark);
      // Told on waking by its lease's local deadline, which passed while it was stopped (the
      // timer already due runs before any reply from Redis is read): `expired`, not a renewal
      // refused a round trip later.
      expect(lost.reason).toBe('expired');
      expect(lost.aborted).toBe(true);
      expect(lost.fencingToken).toBe(first.line.fencingToken);
      await sleep(ttl);
      expect(leaders(workers)).toHaveLength(1);
      expect(leaders(workers)[0]).not.toBe(paused);
    },

    async leaderClosed(): Promise<void> {
      const ttl = 4_500;
      const workers = await start('election', ttl);
      const first = await Promise.any(workers.map((worker) => worker.waitFor((line) => line.event === 'acquired', 10_000).then((line) => ({ worker, line }))));
      const next = nextLeader(workers, 10_000, first.worker);
      first.worker.send('close');
      const lost = await first.worker.waitFor((line) => line.event === 'lost');
      // At shutdown the leader is told through its signal first (issue 18, item 5).
      expect(lost.aborted).toBe(true);
      const { worker, line } = await next;
      // At the others' next try (every ttl / 3), not after the ttl: the leader gave the lease
      // back, and the new leader's first try after that took it (a try already on its way may
      // have found it held; a lease left to run out would have refused every try for 3 s).
      const handedBack = await first.worker.waitFor((l) => l.event === 'released' && l.key === 'feed');
      expect(handedBack.receivedAt).toBeGreaterThanOrEqual(lost.receivedAt);
      const after = worker.lines.findIndex((l) => l.receivedAt > handedBack.receivedAt);
      expect(busyTries(worker, after === -1 ? worker.lines.length : after, line)).toBeLessThanOrEqual(1);
      expect(line.fencingToken).toBe(first.line.fencingToken! + 1);
      expect(await first.worker.exited).toBe(0);
    },
  };
}
