import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, WithoutOverlapping, type LockEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// docs/jobs-and-leaders.md: after Redis lost its data (a restart without persistence, FLUSHALL,
// a failover to a replica that missed the lock) two instances may both run a tick until the first
// learns of the loss. On one instance nothing needs Redis to know that a run is still going: a
// second call there, while the first run goes on, found the run lock gone from Redis, took it
// again and ran beside the first run.
describe('@WithoutOverlapping on one instance, after Redis lost its data while a run goes on', () => {
  const redis = useRedis();

  it('skips a second call on the same instance while the first run goes on', async () => {
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    @Injectable()
    class Sync {
      runs = 0;
      running = 0;
      maxRunning = 0;
      @WithoutOverlapping({ ttl: '30s' })
      async run(): Promise<string> {
        this.runs++;
        this.maxRunning = Math.max(this.maxRunning, ++this.running);
        try {
          if (this.runs === 1) await held;
          return 'ran';
        } finally {
          this.running--;
        }
      }
    }
    const app = await startJobApp([Sync]);
    const skipped: string[] = [];
    app.get<LockService>(LockService).events$.subscribe((event: LockEvent) => event.type === 'skipped' && skipped.push(event.reason));
    const sync = app.get<Sync>(Sync);
    const first = sync.run();
    await expect.poll(() => sync.runs).toBe(1);
    // Redis loses its data (no renewal has run yet: the ttl is 30 s).
    await redis.flushdb();
    const second = await sync.run();
    finish();
    expect(await first).toBe('ran');
    expect({ second, runs: sync.runs, maxRunning: sync.maxRunning, skipped }).toEqual({ second: undefined, runs: 1, maxRunning: 1, skipped: ['held-elsewhere'] });
  });
});
