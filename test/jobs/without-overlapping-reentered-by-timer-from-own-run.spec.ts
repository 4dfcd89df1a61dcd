import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, WithoutOverlapping, type LockEvent, LockService } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// @WithoutOverlapping promises: "a call that finds [the run lock] held, on this instance or
// another, resolves undefined without running". The run lock is taken with tryAcquire(), which
// re-enters a lock the async call chain holds; a timer (or any callback) the run starts carries
// that chain, so a call of the job from it, while the run goes on, re-enters the run lock and runs
// beside the run instead of being skipped (held-elsewhere).
describe('@WithoutOverlapping call made from a timer its own run started', () => {
  const redis = useRedis();

  it('is skipped while the run goes on, not run beside it', async () => {
    @Injectable()
    class Sync {
      running = 0;
      maxRunning = 0;
      runs = 0;
      followUp?: Promise<unknown>;
      @WithoutOverlapping({ ttl: '10s' })
      async run(): Promise<string> {
        this.runs++;
        this.running++;
        this.maxRunning = Math.max(this.maxRunning, this.running);
        try {
          // "Check again soon": a follow-up call, fired while this run still works.
          if (this.runs === 1) setTimeout(() => (this.followUp = this.run()), 0);
          await expect.poll(() => this.followUp !== undefined).toBe(true);
          // Still running when the follow-up call is made.
          expect(await redis.exists('lock:{Sync.run}')).toBe(1);
          await sleep(50);
          return 'ran';
        } finally {
          this.running--;
        }
      }
    }
    const app = await startJobApp([Sync]);
    const skipped: LockEvent[] = [];
    app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'skipped' && skipped.push(event));
    const sync = app.get<Sync>(Sync);
    expect(await sync.run()).toBe('ran');
    const second = await sync.followUp;
    // Fails: the follow-up re-entered the run lock and ran beside the first run.
    expect({ second, runs: sync.runs, maxRunning: sync.maxRunning, skips: skipped.map((event) => (event as { reason: string }).reason) }).toEqual({
      second: undefined,
      runs: 1,
      maxRunning: 1,
      skips: ['held-elsewhere'],
    });
  });

  it('a direct nested call of an @OnOneInstance @WithoutOverlapping job inside its run is skipped too', async () => {
    @Injectable()
    class Rec {
      runs = 0;
      @OnOneInstance({ ttl: '10s' })
      @WithoutOverlapping()
      async run(depth = 0): Promise<unknown> {
        this.runs++;
        if (depth === 0) return ['outer', await this.run(1)];
        return 'inner';
      }
    }
    const app = await startJobApp([Rec]);
    const rec = app.get<Rec>(Rec);
    // Fails: ['outer', 'inner'] and 2 runs (the nested call overlapped the running job).
    expect([await rec.run(), rec.runs]).toEqual([['outer', undefined], 1]);
  });
});
