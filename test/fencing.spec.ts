import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, sleep, type LockApp } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

describe('fencing tokens', () => {
  const redis = useRedis();
  const apps: LockApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('increase strictly across releases, expiries and processes sharing Redis', async () => {
    const a = await createLockApp({ ttl: 200, autoRenew: false });
    const b = await createLockApp({ ttl: 200, autoRenew: false });
    apps.push(a, b);
    const tokens: number[] = [];
    for (let round = 0; round < 3; round++) {
      const released = await a.locks.acquire('k');
      tokens.push(released.fencingToken);
      await released.release();
      const expired = await b.locks.acquire('k');
      tokens.push(expired.fencingToken);
      await sleep(250); // lease runs out, nobody releases
      expect(await redis.exists('lock:{k}')).toBe(0);
      expect(expired.signal.aborted).toBe(true);
    }
    expect(tokens.map((token) => token - tokens[0]!)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await redis.pttl('lock:{k}:fence')).toBe(-1);
  });

  it('are counted per key', async () => {
    const a = await createLockApp();
    apps.push(a);
    const x = await a.locks.acquire('x');
    const y = await a.locks.acquire('y');
    await Promise.all([x.release(), y.release()]);
    const again = await a.locks.acquire('x');
    expect(again.fencingToken).toBe(x.fencingToken + 1);
    await again.release();
    expect(await redis.get('lock:{x}:fence')).toBe(String(again.fencingToken));
    expect(await redis.get('lock:{y}:fence')).toBe(String(y.fencingToken));
  });

  it('start at the server clock in milliseconds on a new key, not at 1', async () => {
    const a = await createLockApp();
    apps.push(a);
    const [seconds, micros] = await redis.time();
    const lock = await a.locks.acquire('new');
    await lock.release();
    expect(lock.fencingToken).toBeGreaterThanOrEqual(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
    expect(Number.isSafeInteger(lock.fencingToken)).toBe(true);
  });
});
