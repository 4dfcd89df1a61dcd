/**
 * Left from the thirty-ninth session: a `using()` / `@Locked` call still WAITING for its lock
 * (another holder has it) inside a job run whose run lock is lost (its renewal refused: the key
 * deleted, Redis restarted empty, a failover) went on waiting: the run's signal had aborted, the
 * job had been told its lock is gone, and yet once the other holder let go, the inner call took its
 * lock and ran its work, beside the run another instance may have started meanwhile.
 */
import { getEventListeners } from 'node:events';
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError, LockService, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a call inside a job run still waiting for its lock when the run lock is lost', () => {
  const redis = useRedis();

  it('ends with LockNotAcquiredError whose cause is the run lock loss, and its work never runs', async () => {
    @Injectable()
    class Stock {
      ran = false;
      ended?: unknown;
      runSignal?: AbortSignal;
      constructor(readonly locks: LockService) {}
      @WithoutOverlapping({ ttl: '1s' })
      async reconcile(): Promise<void> {
        this.runSignal = this.locks.current()?.signal;
        await this.locks.using('lost-run-inventory', () => (this.ran = true), { waitTimeout: '60s' }).catch((error: unknown) => (this.ended = error));
      }
    }
    const app = await startJobApp([Stock]);
    const locks = app.get<LockService>(LockService);
    let waiting = false;
    locks.events$.subscribe((event) => event.type === 'waiting' && event.key === 'lost-run-inventory' && (waiting = true));
    // Held outside the run, for longer than this test lasts.
    const other = await locks.acquire('lost-run-inventory', { ttl: '60s' });
    const job = app.get<Stock>(Stock);
    const run = job.reconcile();
    await expect.poll(() => waiting, { timeout: 5_000 }).toBe(true);
    // The run lock is lost: its next renewal is refused.
    await redis.del('lock:{Stock.reconcile}');
    await expect.poll(() => job.runSignal?.aborted, { timeout: 5_000 }).toBe(true);
    // Failed: still undefined (the call waits for its 60 s waitTimeout, and then takes the lock
    // once the other holder lets go: ran true).
    await expect.poll(() => job.ended, { timeout: 5_000 }).toBeInstanceOf(LockNotAcquiredError);
    await run;
    await other.release();
    const error = job.ended as LockNotAcquiredError;
    expect(error.cause).toBeInstanceOf(LockLostError);
    expect((error.cause as LockLostError).key).toBe('Stock.reconcile');
    expect(error.message).toContain('Lock "Stock.reconcile"');
    expect(await locks.isLocked('lost-run-inventory')).toBe(false);
    expect(job.ran).toBe(false);
  }, 30_000);

  it('ends so inside an outer using() whose lock is lost, as inside a job run', async () => {
    const app = await startJobApp([]);
    const locks = app.get<LockService>(LockService);
    let waiting = false;
    locks.events$.subscribe((event) => event.type === 'waiting' && event.key === 'lost-outer-inner' && (waiting = true));
    const other = await locks.acquire('lost-outer-inner', { ttl: '60s' });
    let ran = false;
    const outer = locks.using('lost-outer', () => locks.using('lost-outer-inner', () => (ran = true), { waitTimeout: '60s' }), { ttl: '1s' });
    await expect.poll(() => waiting, { timeout: 5_000 }).toBe(true);
    await redis.del('lock:{lost-outer}');
    // Failed: the test timed out, the outer call waiting on for its inner one's 60 s waitTimeout.
    const error = await outer.then(() => undefined, (thrown: unknown) => thrown);
    await other.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect(((error as LockNotAcquiredError).cause as LockLostError).key).toBe('lost-outer');
    expect(ran).toBe(false);
  }, 30_000);

  it('leaves no listener on the outer lock once the inner wait has ended, taken or given up', async () => {
    const app = await startJobApp([]);
    const locks = app.get<LockService>(LockService);
    await locks.using('listened-outer', async (outer) => {
      const before = getEventListeners(outer.signal, 'abort').length;
      const other = await locks.acquire('listened-inner', { ttl: '10s' });
      // Taken once the other holder lets go, after a wait.
      const taken = locks.using('listened-inner', () => 'ran', { waitTimeout: '10s' });
      await expect.poll(() => locks.inspect('listened-inner').then((inspection) => inspection.waiters), { timeout: 5_000 }).toBe(1);
      await other.release();
      expect(await taken).toBe('ran');
      // Given up at its waitTimeout.
      const held = await locks.acquire('listened-inner', { ttl: '10s' });
      await expect(locks.using('listened-inner', () => 'ran', { waitTimeout: 300 })).rejects.toBeInstanceOf(LockNotAcquiredError);
      await held.release();
      expect(getEventListeners(outer.signal, 'abort').length).toBe(before);
    });
  }, 30_000);
});
