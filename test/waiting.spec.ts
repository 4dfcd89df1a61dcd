import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../lib/index.js';
import { ReleaseNotifier } from '../lib/core/stores/redis/release-notifier.js';
import { waitForTurn } from '../lib/core/engine/wait-for-turn.js';
import { systemClock } from '../lib/core/time/clock.js';
import { countAttempts } from './support/mechanism.js';
import { CapturedLogs, createLockApp, sleep, type LockApp } from './support/lock-app.js';
import { redisUrl } from './support/redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

describe('a wait whose release subscription cannot be made', () => {
  let server: RedisServer;
  let admin: Redis;
  let app: LockApp;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });
  afterEach(async () => {
    await admin.config('SET', 'maxclients', '10000');
    await app?.close();
  });

  /** Refuses every new connection, so the waiter's subscriber connection never comes up. */
  async function fillMaxClients(): Promise<void> {
    const clients = String(await admin.client('LIST')).trim().split('\n').length;
    await admin.config('SET', 'maxclients', String(clients));
  }

  it('still ends at waitTimeout, and says it degrades to polling', async () => {
    app = await createLockApp({ redis: server.url, ttl: 30_000 });
    await app.locks.acquire('k');
    await fillMaxClients();
    const started = performance.now();
    const error = await app.locks.acquire('k', { waitTimeout: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    // Not held up by the subscription that never comes (nor by the holder's 30 s lease).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(app.logs.has('warn', 'could not be subscribed')).toBe(true);
  });

  it('still ends when its signal aborts or the application shuts down', async () => {
    app = await createLockApp({ redis: server.url, ttl: 30_000 });
    await app.locks.acquire('k');
    await fillMaxClients();
    const aborted = app.locks.acquire('k', { waitTimeout: 30_000, signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
    expect(await aborted).toMatchObject({ name: 'TimeoutError' });
    const waiting = app.locks.acquire('k', { waitTimeout: 30_000 }).catch((e: unknown) => e);
    await sleep(100);
    const started = performance.now();
    await app.close();
    expect(await waiting).toBeInstanceOf(RedisLockError);
    // Far less than the 30 s wait shutdown would otherwise sit out.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('gets the lock by polling once the holder (another application) releases it', async () => {
    const holder = await createLockApp({ redis: server.url, ttl: 30_000 });
    try {
      app = await createLockApp({ redis: server.url, ttl: 30_000 });
      await app.locks.isLocked('k'); // connected before the server refuses new clients
      const held = await holder.locks.acquire('k');
      await fillMaxClients();
      const attempts = countAttempts(app.locks);
      const waiting = app.locks.acquire('k', { waitTimeout: 10_000 });
      await sleep(300);
      const polled = attempts.count;
      await held.release();
      const lock = await waiting;
      expect(lock.held).toBe(true);
      // No message can reach it: a poll after the release found the lock handed to it, within
      // waitTimeout (the holder's lease is 30 s).
      expect(attempts.count).toBeGreaterThan(polled);
      await lock.release();
    } finally {
      await holder.close();
    }
  });
});

describe('grants to a waiter', () => {
  let client: Redis;
  let publisher: Redis;
  let notifier: ReleaseNotifier;
  const shutdown = new AbortController();
  beforeAll(() => {
    client = new Redis(redisUrl());
    publisher = new Redis(redisUrl());
    notifier = new ReleaseNotifier(client, new CapturedLogs(), false);
  });
  afterAll(() => {
    notifier.close();
    client.disconnect();
    publisher.disconnect();
  });

  it('are not swallowed by a wait that already ended on its timer', async () => {
    const watch = notifier.watch('swallow', 'tok', false);
    await watch.ready;
    expect(await waitForTurn(watch, 0, 10_000, 20, undefined, shutdown.signal, systemClock)).toBeUndefined();
    notifier.wake('swallow', 'tok', 7);
    // A swallowed grant would leave this wait to its 2 s timer, which resolves undefined.
    expect(await waitForTurn(watch, 1, 10_000, 2_000, undefined, shutdown.signal, systemClock)).toBe(7);
    watch.close();
  });

  it('are consumed once: the pub/sub copy of a grant already woken locally is ignored', async () => {
    const watch = notifier.watch('phantom', 'tok', false);
    await watch.ready;
    notifier.wake('phantom', 'tok', 5);
    expect(await waitForTurn(watch, 0, 10_000, 2_000, undefined, shutdown.signal, systemClock)).toBe(5);
    // The same grant, published by the release script, arrives after the local wake.
    await publisher.publish('phantom', 'tok:5');
    await sleep(50);
    expect(await waitForTurn(watch, 1, 10_000, 200, undefined, shutdown.signal, systemClock)).toBeUndefined();
    // A later grant (higher fencing token) still wakes it.
    await publisher.publish('phantom', 'tok:9');
    expect(await waitForTurn(watch, 2, 10_000, 2_000, undefined, shutdown.signal, systemClock)).toBe(9);
    watch.close();
  });
});

describe('a caller that gives up while its attempt is still on its way', () => {
  it('leaves only after that attempt, even when a lost script cache makes Redis run it late', async () => {
    const app = await createLockApp({ ttl: 30_000 });
    const admin = new Redis(redisUrl());
    try {
      await app.locks.isLocked('warm-up');
      // A restarted or failed-over server has no scripts: the acquire's EVALSHA fails with
      // NOSCRIPT and is sent again as EVAL, behind whatever was sent meanwhile.
      await admin.script('FLUSH');
      const controller = new AbortController();
      const attempt = app.locks.acquire('departed', { waitTimeout: 10_000, signal: controller.signal }).catch((e: unknown) => e);
      controller.abort(new Error('gave up'));
      expect(await attempt).toMatchObject({ message: 'gave up' });
      await sleep(200);
      // The departed caller holds nothing, and nobody waits in its name.
      expect(await admin.exists('lock:{departed}', 'lock:{departed}:queue', 'lock:{departed}:waiters')).toBe(0);
      expect(await app.locks.tryAcquire('departed')).not.toBeNull();
    } finally {
      await app.close();
      admin.disconnect();
    }
  });
});
