/**
 * Found by review (thirty-ninth session). `inspect()` of a key held by readers (`mode: 'read'`)
 * said `held: true` with no holder and nothing else: not that readers held it, nor how many, where
 * Redisson's read-write lock and an operator asking "who holds this?" tell a read lock from a
 * write lock. The lock board showed it as held by "unknown" and offered "Release by force" for it,
 * a button that always answered "not released" (a release by force leaves readers alone: they
 * renew their own keys and would never learn of it). `inspect()` now says `readers: <count>`
 * (live readers only), the board's list carries it (and no `holderId`), and the page shows a read
 * lock with its readers and no button (test/ops/board.spec.ts).
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl } from '../support/redis.js';

describe('inspect() of a key held by readers', () => {
  for (const store of useBothStores()) {
    it(`says how many readers hold it, and no holder (${store.label})`, async () => {
      const { locks } = await store.open();
      const key = uniqueKey('inspect-readers');
      const first = await locks.acquire(key, { mode: 'read', label: 'Catalog.read' });
      const second = await locks.acquire(key, { mode: 'read', label: 'Catalog.read' });
      const both = await locks.inspect(key);
      expect(both).toMatchObject({ held: true, readers: 2 });
      expect(both.holder).toBeUndefined();
      await first.release();
      expect(await locks.inspect(key)).toMatchObject({ held: true, readers: 1 });
      await second.release();
      expect((await locks.inspect(key)).readers).toBeUndefined();
      // A writer holds it: one holder, no readers.
      const writer = await locks.acquire(key, { label: 'Catalog.write' });
      const written = await locks.inspect(key);
      expect(written.holder?.label).toBe('Catalog.write');
      expect(written.readers).toBeUndefined();
      await writer.release();
    });
  }
});

describe('the lock board list of a key held by readers', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('carries the readers and no holderId a release by force could name', async () => {
    app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, keyPrefix: `board-readers-${process.pid}:` }),
        RedisLockBoardModule.register({ path: 'locks', guards: [AdminHeaderGuard], allowForceRelease: true }),
      ],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    const locks = app.get(LockService);
    const readers = [await locks.acquire('exports', { mode: 'read' }), await locks.acquire('exports', { mode: 'read' })];
    try {
      const response = await fetch(`${url}/api/locks?cursor=0`, { headers: { 'x-admin': 'yes' } });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { locks: { key: string; held: boolean; readers?: number; holderId?: string }[] };
      const listed = page.locks.find((lock) => lock.key === 'exports');
      expect(listed).toMatchObject({ held: true, readers: 2 });
      expect(listed).not.toHaveProperty('holderId');
    } finally {
      await Promise.all(readers.map((reader) => reader.release()));
    }
  });
});
