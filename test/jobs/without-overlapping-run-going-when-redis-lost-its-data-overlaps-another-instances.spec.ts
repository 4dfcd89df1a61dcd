/**
 * Found by review (forty-first session): docs/jobs-and-leaders.md said that across a loss of
 * Redis' data "the run lock of @WithoutOverlapping() keeps the two runs apart in time". A run
 * already going when Redis lost its data holds a run lock that is gone: another instance's call
 * takes it and runs beside it, until the first run lock's next renewal is refused (a third of its
 * ttl later at most) and the first run's signal aborts. Nothing on Redis can tell; the docs say so
 * now, and this spec pins what they say.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('@WithoutOverlapping() on two instances, Redis losing its data while a run goes on', () => {
  const redis = useRedis();

  it('runs another instance\'s call beside the run, until the run lock\'s renewal is refused and aborts its signal', { timeout: 20_000 }, async () => {
    const state = { running: 0, most: 0, signals: [] as AbortSignal[] };
    const finish: (() => void)[] = [];
    @Injectable()
    class Export {
      constructor(readonly locks: LockService) {}
      @WithoutOverlapping({ ttl: '3s' })
      async run(): Promise<string> {
        state.most = Math.max(state.most, ++state.running);
        const { signal } = this.locks.current()!;
        state.signals.push(signal);
        await new Promise<void>((resolve) => finish.push(resolve));
        state.running--;
        return signal.aborted ? `aborted: ${(signal.reason as { reason?: string }).reason}` : 'held to the end';
      }
    }
    const [a, b] = [await startJobApp([Export]), await startJobApp([Export])];
    const first = a.get<Export>(Export).run();
    await expect.poll(() => state.running).toBe(1);
    await redis.flushdb();
    const second = b.get<Export>(Export).run();
    await expect.poll(() => state.most).toBe(2);
    // The first run hears of it at its run lock's next renewal (Redis has the second's now).
    await expect.poll(() => state.signals[0]!.aborted, { timeout: 5_000 }).toBe(true);
    for (const resolve of finish) resolve();
    expect([await first, await second]).toEqual(['aborted: refused', 'held to the end']);
  });
});
