import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService } from '../../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../../lib/testing/index.js';

describe('probe: testing module close with manual clock', () => {
  it('ends', { timeout: 10_000 }, async () => {
    const locks = new InMemoryLocks({ clock: 'manual' });
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks, ttl: '30s' })] }).compile();
    await moduleRef.init();
    const service = moduleRef.get(LockService);
    const a = await service.acquire('t:a');
    const b = await service.acquire('t:b', { autoRenew: false, ttl: '2s' });
    const c = await service.acquire('t:c');
    await locks.manualClock.advance('3s');
    expect(b.signal.aborted).toBe(true);
    const rc = c.release();
    const rb = b.release();
    const t0 = performance.now();
    await moduleRef.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    await expect(a.release()).resolves.toBeUndefined();
    await expect(rb).resolves.toBeUndefined();
    await expect(rc).resolves.toBeUndefined();
    expect(a.signal.aborted).toBe(true);
  });
});
