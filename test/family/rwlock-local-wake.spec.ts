import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockService, type Lock } from '../../lib/index.js';
import { MemoryNotifier } from '../../lib/core/stores/memory/memory-notifier.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts, holdPolls, recordWakes, type WakeLog, type WakeStep } from '../support/mechanism.js';
import { startRedisServer } from '../support/redis-server.js';

const READERS = 3;

/**
 * Queues `READERS` readers behind the write lock on `key`, in the process that holds it, and
 * settles once each sleeps in its wait, subscribed, with no attempt on its way; returns their
 * acquisitions and the log of their steps (`recordWakes`). Their polls are held (a loaded machine
 * let them poll while the test watched the acquire scripts): from then on only a release can wake
 * them, with the release messages lost only the release itself.
 */
async function queueReaders(locks: LockService, key: string): Promise<{ readers: Promise<Lock>[]; wakes: WakeLog }> {
  const wakes = recordWakes(locks);
  const attempts = countAttempts(locks);
  const polls = holdPolls(locks);
  const readers: Promise<Lock>[] = [];
  for (let i = 0; i < READERS; i++) readers.push(locks.acquire(key, { mode: 'read', waitTimeout: 10_000 }));
  // A held timer is also the bound on a subscription not yet confirmed: `sleeping` alone was
  // reached while a loaded Redis had not answered SUBSCRIBE, and the attempt each reader makes
  // once subscribed then ran after the release and took its grant ('won', no 'granted').
  await attempts.listening();
  await expect.poll(() => polls.sleeping, { timeout: 10_000 }).toBe(READERS);
  attempts.stop();
  return { readers, wakes };
}

/**
 * The readers' steps since `from`: each was woken by a grant, before any attempt of its own (a
 * poll or a message would have made one first). A grant taken a whole grant lease after the
 * reader's last attempt (polls held on a loaded machine) is confirmed by one attempt after it.
 */
function expectWokenByGrants(steps: readonly WakeStep[], from: number): void {
  const since = steps.slice(from);
  expect({ first: since[0], granted: since.filter((step) => step === 'granted').length, otherwise: since.filter((step) => step !== 'granted' && step !== 'won') }).toEqual({
    first: 'granted',
    granted: READERS,
    otherwise: [],
  });
  expect(since.filter((step) => step === 'won').length).toBeLessThanOrEqual(READERS);
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
      const { readers, wakes } = await queueReaders(app.locks, 'rw-local');
      // The release messages are published while the subscriber is gone (ioredis reconnects it
      // 50 ms later at the earliest): only the local wake can let the readers in.
      await admin.client('KILL', 'TYPE', 'pubsub');
      const from = wakes.steps.length;
      await writer.release();
      const held = await Promise.all(readers);
      expectWokenByGrants(wakes.steps, from);
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
      const { readers, wakes } = await queueReaders(locks, 'rw-local');
      // From here on the store's release messages are lost.
      vi.spyOn(MemoryNotifier.prototype, 'receive').mockImplementation(() => undefined);
      const from = wakes.steps.length;
      await writer.release();
      const held = await Promise.all(readers);
      expectWokenByGrants(wakes.steps, from);
      expect(held.every((lock) => lock.held)).toBe(true);
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await moduleRef.close();
    }
  });
});
