/**
 * Found by review (forty-second session). A multi-key lock still held at `app.close()` was warned of
 * once per key, each naming one key as a lock of its own (`Lock "mk:a" was still held at
 * shutdown` ..., five lines for five keys), where every other warning of a multi-key lock names
 * the lock of keys. One warning now names it (the first three keys and how many more).
 */
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() with a multi-key lock still held', () => {
  const own = useOwnRedis();

  it('warns once, naming the lock of keys', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: own.url(), shutdownTimeout: '1s' });
    await app.locks.acquire(['mk:e', 'mk:d', 'mk:c', 'mk:b', 'mk:a']);
    await app.close();
    const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toEqual(['The lock of keys "mk:a", "mk:b", "mk:c" and 2 more was still held at shutdown; releasing it.']);
    expect(await own.redis().keys('lock:{mk:*}')).toEqual([]);
  });
});
