/**
 * Left open with the Cluster board cursor: a SCAN cursor is a place in one server's table. A
 * server restarted in the middle of a walk (a deploy, a crash with persistence; a failover
 * likewise) loads the same keys into a new table, hashed with a new seed, and a cursor handed out
 * before skips whatever now sits behind it: the walk left locks out and still said `complete`.
 * The cursor now carries the start of the server's run id, and a server that changed is
 * scanned again from its start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listLocks } from '../../lib/core/stores/redis/lock-admin.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp } from '../support/lock-app.js';

describe('board listing on one Redis server restarted mid-walk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'board-restart-'));
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(['--dir', dir, '--dbfilename', 'dump.rdb']);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every lock, scanning the restarted server again', { timeout: 60_000 }, async () => {
    const client = new Redis(server.port, '127.0.0.1');
    const app = await createLockApp({ redis: client });
    try {
      const keys = Array.from({ length: 200 }, (_, i) => `spread:${i}`);
      await Promise.all(keys.map((key) => app.locks.acquire(key, { ttl: 120_000 })));
      const manager = app.locks[LOCK_RUNNER] as LockManager;
      const first = await listLocks(manager, '0', 20);
      expect(first.complete).toBe(false);
      // The same keys, in a new table.
      const admin = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null }).on('error', () => undefined);
      await admin.call('SHUTDOWN', 'SAVE').catch(() => undefined);
      admin.disconnect();
      await server.stop();
      await server.start();
      const seen = first.locks.map((lock) => lock.key);
      let cursor = first.cursor;
      let complete = false;
      for (let page = 0; page < 100 && !complete; page++) {
        const result = await listLocks(manager, cursor, 20);
        seen.push(...result.locks.map((lock) => lock.key));
        cursor = result.cursor;
        complete = result.complete;
      }
      expect({ complete, listed: [...new Set(seen)].sort() }).toEqual({ complete: true, listed: [...keys].sort() });
    } finally {
      await app.close().catch(() => undefined);
      client.disconnect();
    }
  });
});
