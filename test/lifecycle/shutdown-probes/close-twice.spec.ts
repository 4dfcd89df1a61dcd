import { describe, expect, it } from 'vitest';
import { createLockApp } from '../../support/lock-app.js';
import { useOwnRedis } from '../../support/redis.js';

describe('probe: close twice', () => {
  const own = useOwnRedis();
  it('second close and release after', { timeout: 20_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), shutdownTimeout: '500ms' });
    const lock = await app.locks.acquire('ct:a');
    const lock2 = await app.locks.acquire('ct:b');
    const p = lock2.release();
    const [a, b] = await Promise.allSettled([app.close(), app.close()]);
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
    await expect(app.close()).resolves.toBeUndefined();
    await expect(lock.release()).resolves.toBeUndefined();
    await expect(p).resolves.toBeUndefined();
    expect(await own.redis().exists('lock:{ct:a}', 'lock:{ct:b}')).toBe(0);
    expect(app.logs.lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
