import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { ChaosWorker } from './support/chaos-worker.js';
import { report } from './support/report.js';
import { createLockApp } from '../support/lock-app.js';
import { LOCK_ACL } from '../support/least-privilege-acl.js';

/**
 * The ACL docs/deployment.md documents: only the commands the library sends (and its scripts call),
 * only keys and channels under its prefix.
 */

describe('chaos: least privilege', () => {
  const redis = useRedis();
  const user = `locks-${process.pid}`;
  let url: string;

  beforeAll(async () => {
    await redis.acl('SETUSER', user, 'reset', ...LOCK_ACL);
    const base = new URL(redisUrl());
    base.username = user;
    base.password = 'lock-secret';
    url = base.toString();
  });
  afterAll(async () => {
    await redis.acl('DELUSER', user);
  });

  it('runs contended locking as an ACL user confined to the lock prefix', { timeout: 60_000 }, async () => {
    const workers = Array.from({ length: 2 }, (_, i) =>
      ChaosWorker.start({ REDIS_URL: url, COUNTER_URL: redisUrl(), MODE: 'exclusion', KEY: 'acl', ITERATIONS: 150 }, `acl-${i}`),
    );
    const results = await Promise.all(workers.map((worker) => worker.next<{ sections: unknown[] }>('sections', 30_000)));
    await Promise.all(workers.map((worker) => worker.exitsOnItsOwn()));
    expect(results.flatMap((result) => result.sections)).toHaveLength(300);
    expect(await redis.get('acl:counter')).toBe('300');

    const app = await createLockApp({ redis: url, ttl: 1_000, renewInterval: 200 });
    const tokens = new Set<string>();
    const spy = new Redis(redisUrl());
    try {
      const held = await app.locks.acquire('acl-key');
      const waiting = app.locks.acquire('acl-key', { waitTimeout: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 500)); // renewals and a queued waiter
      tokens.add((await spy.get('lock:{acl-key}'))!);
      await held.release();
      const next = await waiting;
      tokens.add((await spy.get('lock:{acl-key}'))!);
      // The grant's token, or a later one: a waiter that heard its grant more than a third of
      // the 1 s lease after its last answered attempt renews it before handing it out, and one
      // whose renewal a loaded CI machine left unanswered gives it back and takes the lock anew
      // (twice in one CI run: held + 2).
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      expect(await app.locks.isLocked('acl-key')).toBe(true);
      await next.release();
      expect(held.signal.aborted).toBe(false);
      expect(app.logs.lines.filter((line) => /NOPERM|no permissions/i.test(line.message))).toEqual([]);
      for (let i = 0; i < 200; i++) {
        const lock = await app.locks.acquire(`acl-many-${i % 5}`);
        tokens.add((await spy.get(`lock:{acl-many-${i % 5}}`))!);
        await lock.release();
      }
    } finally {
      await app.close();
      await spy.quit();
    }
    const denied = new Redis(url);
    const refused = await denied.get('outside').catch((error: Error) => error.message);
    await denied.quit();
    expect(refused).toMatch(/NOPERM/);
    // Owner tokens: 128 random bits each (then the holder record), never repeated.
    expect([...tokens].every((token) => /^[0-9a-f]{32}\.[A-Za-z0-9_-]+\.[0-9a-z]+$/.test(token))).toBe(true);
    expect(tokens.size).toBe(202);
    report('least-privilege', { processes: 2, acquisitions: 300, aclCommands: LOCK_ACL.filter((rule) => rule.startsWith('+')).length, outsidePrefix: 'NOPERM', distinctTokens: tokens.size, tokenBits: 128 });
  });

  it('runs semaphores, read locks and a queue repair as that user too', async () => {
    const app = await createLockApp({ redis: url, ttl: 2_000 });
    const spy = new Redis(redisUrl());
    try {
      const permits = await Promise.all([0, 1].map(() => app.locks.acquire('acl-sem', { limit: 2 })));
      expect(await app.locks.tryAcquire('acl-sem', { limit: 2 })).toBeNull();
      await Promise.all(permits.map((permit) => permit.release()));
      // A holder alone has no permit key: its renewal renews the holders hash (see docs/redis-data.md).
      const alone = await app.locks.acquire('acl-alone', { limit: 2 });
      expect(await spy.hlen('lock:{acl-alone}:holders')).toBe(1);
      await alone.extend(60_000);
      expect(alone.held).toBe(true);
      expect(await spy.pttl('lock:{acl-alone}:holders')).toBeGreaterThan(30_000);
      await alone.release();
      expect(await spy.exists('lock:{acl-alone}:holders')).toBe(0);
      const readers = await Promise.all([0, 1].map(() => app.locks.acquire('acl-rw', { mode: 'read' })));
      const writer = app.locks.acquire('acl-rw', { waitTimeout: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await Promise.all(readers.map((reader) => reader.release()));
      await (await writer).release();
      // A queue list lost on its own is rebuilt from its waiters (ZRANGE).
      const held = await app.locks.acquire('acl-queue');
      const waiting = app.locks.acquire('acl-queue', { waitTimeout: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await spy.del('lock:{acl-queue}:queue');
      await held.release();
      await (await waiting).release();
      expect(app.logs.lines.filter((line) => /NOPERM|no permissions/i.test(line.message))).toEqual([]);
    } finally {
      await app.close();
      await spy.quit();
    }
  });
});
