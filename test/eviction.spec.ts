import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp, sleep } from './support/lock-app.js';
import { redisUrl } from './support/redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

describe('a Redis that may evict keys', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
  });
  afterAll(() => server.stop());

  it('is named in a warning at startup: a held lock could be evicted', async () => {
    const app = await createLockApp({ redis: server.url });
    try {
      await expect.poll(() => app.logs.has('warn', 'maxmemory-policy allkeys-lru')).toBe(true);
      expect(app.logs.has('warn', 'Set maxmemory-policy noeviction')).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('goes unmentioned when Redis does not evict', async () => {
    const app = await createLockApp({ redis: redisUrl() });
    try {
      await app.locks.isLocked('k');
      await sleep(100);
      expect(app.logs.has('warn', 'evict')).toBe(false);
    } finally {
      await app.close();
    }
  });
});
