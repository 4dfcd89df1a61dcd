import { Injectable } from '@nestjs/common';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance } from '../../lib/index.js';
import { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// Found by review. JobLockOrchestrator.takeLocks() checks `closing` once its locks are taken (job-lock.orchestrator.ts:267),
// but the run is registered in `running` only later, in execute() -> track() (line 285), a few
// promise turns on (takeLocks' return, take()'s await, run()'s then at line 121); runObservable()
// has the same gap (take().then -> track, line 141). A shutdown (stop(), line 168) that begins in
// that gap snapshots `running` without the run: it never interrupts the run's signal, does not
// wait for it, and hands the owner lease back while the job's code starts and runs (the run even
// finds `current()` undefined: its lease is being released). app.close() then goes on to close
// the connections under a running job, and another instance can take the lease and run the next
// tick beside it.
//
// The test drives the shutdown at each promise turn after the call (the owner lease is already
// held, so the call needs no Redis round trip): every outcome must be "skipped" (the call saw the
// close) or "told-and-awaited" (stop() aborted the run's signal and waited for it).
describe('a shutdown that begins between a job call taking its locks and its run starting', () => {
  const redis = useRedis();

  async function sweep(kind: 'promise' | 'observable'): Promise<string[]> {
    const outcomes: string[] = [];
    for (let turns = 0; turns <= 8; turns++) {
      let started = false;
      let ended = false;
      let aborted = false;
      let noLock = false;
      const key = `gap-${kind}-${turns}`;
      let warming = true;
      const body = (locks: LockService, done: () => void): void => {
        // The first call only takes the owner lease.
        if (warming) return done();
        started = true;
        const held = locks.current();
        if (held === undefined) noLock = true;
        const signal = held?.signal ?? new AbortController().signal;
        // Waits for its signal, as docs/jobs-and-leaders.md tells jobs to (bounded for the test).
        const timer = setTimeout(() => {
          ended = true;
          done();
        }, 1_000);
        signal.addEventListener('abort', () => {
          aborted = ended = true;
          clearTimeout(timer);
          done();
        });
      };
      @Injectable()
      class GapJob {
        constructor(readonly locks: LockService) {}
        @OnOneInstance({ key, ttl: '5s' })
        run(): Promise<void> {
          return new Promise((resolve) => body(this.locks, resolve));
        }
        @OnOneInstance({ key: `${key}-o`, ttl: '5s' })
        stream(): Observable<void> {
          return new Observable<void>((subscriber) => body(this.locks, () => subscriber.complete()));
        }
      }
      const app = await startJobApp([GapJob]);
      const job = app.get(GapJob);
      const call = (): Promise<unknown> => (kind === 'promise' ? job.run() : new Promise((resolve, reject) => job.stream().subscribe({ complete: () => resolve(undefined), error: reject })));
      // The first call takes the owner lease; the next one finds it held and needs no Redis.
      await call();
      warming = false;
      const second = call();
      for (let i = 0; i < turns; i++) await Promise.resolve();
      await app.get(JobLockOrchestrator).onModuleDestroy();
      const lease = await redis.exists(`lock:{${kind === 'promise' ? key : `${key}-o`}:owner}`);
      outcomes.push(
        `${turns}: ${!started ? 'skipped' : ended ? (aborted ? 'told-and-awaited' : 'ran-to-its-end-before-stop-ended') : `still-running (untold; its owner lease in Redis: ${lease}${noLock ? '; current() undefined in the run' : ''})`}`,
      );
      await second;
      await closeNow(app);
    }
    return outcomes;
  }

  it('a job returning a Promise: stop() tells the run and waits for it before handing the lease back', async () => {
    const outcomes = await sweep('promise');
    // Fails: e.g. "1: still-running (untold; its owner lease in Redis: 0; current() undefined in the run)"
    expect(outcomes.filter((outcome) => !/skipped|told-and-awaited/.test(outcome))).toEqual([]);
  }, 60_000);

  it('a job declared to return an Observable: the same', async () => {
    const outcomes = await sweep('observable');
    expect(outcomes.filter((outcome) => !/skipped|told-and-awaited/.test(outcome))).toEqual([]);
  }, 60_000);
});
