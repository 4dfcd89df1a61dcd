/**
 * Found by review: a renewal the store calls refused (no majority can still be this holder's)
 * has just pushed the lease to a full ttl on the masters that answered RENEWED, and a refused
 * lock sends no release (on one Redis, refused means someone else's key). With 4 masters,
 * two restarting empty left the holder 2 copies of 4: refused, and no rival could reach 3 of 4
 * either, for a whole ttl. (With 3 or 5 the copies left are a minority: they block nobody, but
 * take masters out of the quorum for that key.)
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

describe('quorum of 4: a renewal refused after two masters restarted empty', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) servers.push(await startRedisServer());
  });
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  it('gives back the copies it still has, so that a rival is not locked out for a ttl', { timeout: 30_000 }, async () => {
    const key = 'q:q4:refused';
    const urls = servers.map((server) => server.url);
    const holder = await createLockApp({ redis: urls as never, ttl: 20_000, renewInterval: 300 });
    const rival = await createLockApp({ redis: urls as never, ttl: 20_000 });
    try {
      const lock = await holder.locks.acquire(key);
      // Masters 2 and 3 lost the key (restarted empty, say).
      await Promise.all([2, 3].map(async (i) => {
        const admin = new Redis(urls[i]!);
        await admin.del(`lock:{${key}}`);
        admin.disconnect();
      }));
      await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
      expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
      // The holder was told it lost the lock: its copies are given back (owner-checked)...
      const ttls = () => Promise.all(urls.map(async (url) => {
        const admin = new Redis(url);
        try {
          return await admin.pttl(`lock:{${key}}`);
        } finally {
          admin.disconnect();
        }
      }));
      // Before: masters 0 and 1 held it for the rest of the 20 s ttl.
      await expect.poll(async () => (await ttls()).map((ms) => (ms > 0 ? 'held' : 'free'))).toEqual(['free', 'free', 'free', 'free']);
      // ...so a rival takes it at once.
      const taken = await rival.locks.tryAcquire(key);
      expect(taken).not.toBeNull();
      await taken?.release();
    } finally {
      await holder.close();
      await rival.close();
    }
  });
});
