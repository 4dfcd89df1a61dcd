import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockService, type Lock } from '../../lib/index.js';
import { MemoryReaders } from '../../lib/core/rwlock/memory-readers.js';
import { MemoryNotifier } from '../../lib/core/stores/memory/memory-notifier.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { createLockApp, nextEvent, sleep } from '../support/lock-app.js';
import { lockScriptKind, watchCommands } from '../support/monitor.js';
import { startRedisServer } from '../support/redis-server.js';

const READERS = 3;

/** Queues `READERS` readers behind the write lock `held`, in the process that holds it. */
async function queueReaders(locks: LockService, key: string): Promise<Promise<Lock>[]> {
  const readers: Promise<Lock>[] = [];
  for (let i = 0; i < READERS; i++) {
    const waiting = nextEvent(locks.events$, 'waiting', 10_000);
    readers.push(locks.acquire(key, { mode: 'read', waitTimeout: 10_000 }));
    await waiting;
  }
  await sleep(100); // subscribed
  return readers;
}

describe("readers let in by a writer's release in their own process", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are all woken by the release itself, without the release messages (one Redis)', async () => {
    // A server of its own: the test drops every subscriber connection on it.
    const server = await startRedisServer();
    const admin = new Redis(server.url);
    const app = await createLockApp({ redis: server.url, ttl: 30_000 });
    try {
      const writer = await app.locks.acquire('rw-local');
      const readers = await queueReaders(app.locks, 'rw-local');
      const commands = await watchCommands('lock:{rw-local}', server.url);
      // The release messages are published while the subscriber is gone (ioredis reconnects it
      // 50 ms later at the earliest): only the local wake can let the readers in at once.
      await admin.client('KILL', 'TYPE', 'pubsub');
      await writer.release();
      const held = await Promise.all(readers);
      await commands.stop();
      // Woken at once: no reader asked again (left to its next poll or to the resubscription,
      // it would run the acquire script).
      expect(commands.seen.filter((command) => lockScriptKind(command) === 'acquire')).toEqual([]);
      expect(held.every((lock) => lock.held)).toBe(true);
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await app.close();
      admin.disconnect();
      await server.stop();
    }
  });

  it('are all woken by the release itself, without the release messages (in memory)', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), ttl: 30_000 })] }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    try {
      const writer = await locks.acquire('rw-local');
      const readers = await queueReaders(locks, 'rw-local');
      // From here on the store's release messages are lost, and every read attempt is counted.
      vi.spyOn(MemoryNotifier.prototype, 'receive').mockImplementation(() => undefined);
      const attempts = vi.spyOn(MemoryReaders.prototype, 'acquire');
      await writer.release();
      const held = await Promise.all(readers);
      expect(attempts).not.toHaveBeenCalled();
      expect(held.every((lock) => lock.held)).toBe(true);
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await moduleRef.close();
    }
  });
});
