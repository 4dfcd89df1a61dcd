import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSlot } from '../lib/core/keys/cluster-slot.js';
import type { LockManager } from '../lib/core/engine/lock-manager.js';
import { listLocks } from '../lib/core/stores/redis/lock-admin.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { LockLostError, LockNotAcquiredError, LockService, RedisLockModule } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { RedisLockHealthIndicator } from '../lib/terminus/index.js';
import { handedLockApp, openClient, type HandedClient, type HandedClientName } from './support/handed-clients.js';
import { CapturedLogs, createLockApp, nextEvent } from './support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from './support/mechanism.js';
import { redisUrl, shardSubscribers, subscribers } from './support/redis.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { useRedisCluster } from './support/redis-cluster.js';

// The clients teams moving to Valkey pick, handed in, against Redis 7: what the behaviour suites
// (test/behaviour/ioredis-family*.spec.ts) do not show: the release message, the watchdog's
// batches and an outage.
const CLIENTS: HandedClientName[] = ['iovalkey', 'GLIDE'];

/** Outcomes of a renewal batch, in the order of the requests. */
async function renewAll(scripts: LockScripts, requests: { lockKey: string; token: string; ttl: number }[]): Promise<{ parts: number; outcomes: unknown[] }> {
  const parts = scripts.renewBatch(requests);
  const outcomes: unknown[] = new Array(requests.length);
  for (const part of parts) (await part.outcomes).forEach((outcome, i) => (outcomes[part.indexes[i]!] = outcome));
  return { parts: parts.length, outcomes };
}

/**
 * Holds `count - 10` locks with the tokens the batch renews and one with another owner's, renews
 * all `count` in one batch through `scripts`, and checks the outcomes and the Redis state: the
 * held ones renewed, the stolen and missing ones refused, the stolen one left alone. Resolves
 * the number of round trips (batch parts) it took.
 */
async function renewHeldBatch(scripts: LockScripts, admin: Redis | Cluster, count: number): Promise<number> {
  const held = count - 10;
  const requests = Array.from({ length: count }, (_, i) => ({ lockKey: `lock:{batch:${i}}`, token: `t${i}`, ttl: 60_000 }));
  for (const { lockKey, token } of requests.slice(0, held)) await admin.set(lockKey, token, 'PX', 10_000);
  await admin.set(`lock:{batch:${held}}`, 'someone else', 'PX', 10_000);
  const { parts, outcomes } = await renewAll(scripts, requests);
  expect(outcomes.slice(0, held).every((outcome) => outcome === true)).toBe(true);
  expect(outcomes.slice(held).every((outcome) => outcome === false)).toBe(true);
  expect(await admin.pttl('lock:{batch:7}')).toBeGreaterThan(30_000);
  expect(await admin.get(`lock:{batch:${held}}`)).toBe('someone else');
  return parts;
}

/**
 * Locks taken through `handed`, then seen by inspect(), paged through by the lock board's listing
 * (one lock a page: the SCAN of every master) and checked by the terminus indicator (a PING to
 * every master); resolves the indicator's nodes.
 */
async function operate(handed: HandedClient): Promise<{ address?: string; status: string }[]> {
  const moduleRef = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: handed.client })],
    providers: [RedisLockHealthIndicator],
  })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  try {
    const locks = moduleRef.get(LockService);
    const keys = Array.from({ length: 6 }, (_, i) => `board:${i}`);
    const held = await Promise.all(keys.map((key) => locks.acquire(key, { label: `job ${key}` })));
    const waiting = locks.acquire('board:0', { waitTimeout: 10_000 });
    waiting.catch(() => undefined); // a failed check below ends the wait with the module
    await expect.poll(async () => (await locks.inspect('board:0')).waiters).toBe(1);
    expect(await locks.inspect('board:0')).toMatchObject({ held: true, fencingToken: held[0]!.fencingToken, waiters: 1, holder: { label: 'job board:0' } });
    const manager = locks[LOCK_RUNNER] as LockManager;
    const seen: string[] = [];
    let cursor = '0';
    let pages = 0;
    do {
      const page = await listLocks(manager, cursor, 1);
      seen.push(...page.locks.map((lock) => lock.key));
      cursor = page.cursor;
    } while (cursor !== '0' && ++pages < 200);
    expect([...new Set(seen)].sort()).toEqual(keys);
    // The addresses are asked for (showDetails): the Cluster case checks each master by its own.
    const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks', { showDetails: true });
    expect(health.locks.status).toBe('up');
    await Promise.all(held.map((lock) => lock.release()));
    await (await waiting).release();
    return (health.locks as unknown as { nodes: { address?: string; status: string }[] }).nodes;
  } finally {
    await moduleRef.close();
    expect(handed.isOpen()).toBe(true);
  }
}

describe.each(CLIENTS)('a %s client on one Redis', (name) => {
  // A server of its own: the outage test kills it.
  let server: RedisServer;
  let admin: Redis;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    admin.on('error', () => undefined); // the outage test kills the server
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    admin?.disconnect();
    await server?.stop();
  });

  it('wakes a waiter in another instance with the release message, not by polling the lease, and leaves no connection open', async () => {
    const connections = async () => String(await admin.client('LIST')).split('\n').filter(Boolean).length;
    const before = await connections();
    const holder = await handedLockApp(await openClient(name, server.url), { ttl: 20_000 });
    const waiter = await handedLockApp(await openClient(name, server.url));
    try {
      const held = await holder.locks.acquire('wake');
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire('wake', { waitTimeout: 15_000 });
      waiting.catch(() => undefined); // a failed check below ends the wait with the app
      // The waiter's subscription exists on the server before the release.
      await expect.poll(() => subscribers(admin, 'lock:{wake}:released'), { timeout: 5_000 }).toBe(1);
      const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
      // A poll (every 250 ms, not only when the lease runs out) would have made an attempt and
      // found the lock handed to it: the message woke it if there was none.
      expect(attemptsSinceRelease).toBe(0);
      expect(next.fencingToken).toBe(held.fencingToken + 1);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
    // The clients handed in are closed by the test; the subscriber connections by the module.
    await expect.poll(connections, { timeout: 5_000 }).toBe(before);
  });

  it('renews a watchdog batch in one call, with an outcome for every lock', async () => {
    const handed = await openClient(name, server.url);
    try {
      const scripts = new LockScripts(handed.client as never);
      // One call on one server.
      expect(await renewHeldBatch(scripts, admin, 30)).toBe(1);
    } finally {
      handed.close();
      await admin.del(...Array.from({ length: 30 }, (_, i) => `lock:{batch:${i}}`));
    }
  });

  it('answers inspect(), the lock board listing and the terminus indicator', async () => {
    const handed = await openClient(name, server.url);
    try {
      const nodes = await operate(handed);
      expect(nodes).toEqual([expect.objectContaining({ status: 'up' })]);
    } finally {
      handed.close();
    }
  });

  it('aborts the signal at the lease deadline when Redis is killed, fails waits clearly, and works again once Redis is back', { timeout: 30_000 }, async () => {
    const app = await handedLockApp(await openClient(name, server.url), { ttl: 1_000, renewInterval: 300 });
    try {
      const lock = await app.locks.acquire('k');
      await nextEvent(app.locks.events$, 'renewed');
      const aborted = new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve(), { once: true }));
      await server.stop({ kill: true });
      await aborted;
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'expired' });

      const waiting = await app.locks.acquire('other', { waitTimeout: 300 }).catch((error: unknown) => error);
      expect(waiting).toBeInstanceOf(LockNotAcquiredError);
      expect((waiting as Error).message).toMatch(/Redis did not answer/);

      // The server comes back empty: no lock, and no cached script (EVALSHA falls back to EVAL).
      await server.start();
      const again = await app.locks.acquire('k', { waitTimeout: 10_000 });
      expect(again.held).toBe(true);
      await again.release();
      await lock.release().catch(() => undefined);
      expect(unhandled).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe.each(CLIENTS)('a %s client on one Redis that freezes', (name) => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    server?.resume();
    await server?.stop();
  });

  it('aborts the signal at the lease deadline while renewals hang, and shuts down without waiting for the frozen server', { timeout: 30_000 }, async () => {
    const app = await handedLockApp(await openClient(name, server.url), { ttl: 1_000, renewInterval: 300, shutdownTimeout: 300 });
    let closed = false;
    try {
      const lock = await app.locks.acquire('k');
      const aborted = new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve(), { once: true }));
      server.pause();
      await aborted;
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
      server.resume();
      const held = await app.locks.acquire('held', { waitTimeout: 10_000 });
      server.pause();
      // Shutdown must not hang on commands a frozen server never answers (the test's timeout would end it).
      closed = true;
      await app.close();
      expect(held.signal.reason).toMatchObject({ reason: 'shutdown' });
    } finally {
      server.resume();
      if (!closed) await app.close();
    }
  });
});

describe('a Redis 7 Cluster', () => {
  // One Cluster for every client's tests: each leaves no lock behind.
  const redisCluster = useRedisCluster();

  describe.each(CLIENTS)('through a %s client', (name) => {
    /** The master that serves a key, as ioredis knows it. */
    const masterOf = (key: string) => {
      const address = redisCluster.admin.slots[clusterSlot(key)]![0]!;
      return redisCluster.admin.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === address)!;
    };

    it('wakes a waiter with a sharded release message, carried by the shard that owns the lock', async () => {
      const holder = await handedLockApp(await openClient(name, redisCluster.cluster.nodes), { ttl: 20_000 });
      const waiter = await handedLockApp(await openClient(name, redisCluster.cluster.nodes));
      try {
        const held = await holder.locks.acquire('sharded');
        const attempts = countAttempts(waiter.locks);
        const waiting = waiter.locks.acquire('sharded', { waitTimeout: 15_000 });
        waiting.catch(() => undefined); // a failed check below ends the wait with the app
        const owner = masterOf('lock:{sharded}');
        await expect.poll(() => shardSubscribers(owner, 'lock:{sharded}:released'), { timeout: 5_000 }).toBe(1);
        const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
        // Woken by the shard's message: a poll would have made an attempt.
        expect(attemptsSinceRelease).toBe(0);
        expect(next.fencingToken).toBe(held.fencingToken + 1);
        await next.release();
      } finally {
        await Promise.all([holder.close(), waiter.close()]);
      }
    });

    it('subscribes again when its connection to the master that carries the channel is killed, and the release still wakes the waiter', async () => {
      const holder = await handedLockApp(await openClient(name, redisCluster.cluster.nodes), { ttl: 20_000 });
      const waiter = await handedLockApp(await openClient(name, redisCluster.cluster.nodes));
      try {
        const held = await holder.locks.acquire('resubscribed');
        const attempts = countAttempts(waiter.locks);
        const waiting = waiter.locks.acquire('resubscribed', { waitTimeout: 15_000 });
        waiting.catch(() => undefined); // a failed check below ends the wait with the app
        const owner = masterOf('lock:{resubscribed}');
        const subscribed = () => shardSubscribers(owner, 'lock:{resubscribed}:released');
        await expect.poll(subscribed, { timeout: 5_000 }).toBe(1);
        expect(Number(await owner.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBeGreaterThan(0);
        await expect.poll(subscribed, { timeout: 10_000 }).toBe(1);
        const { lock: next, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting, 'watching');
        // Woken by a message on the new subscription: a poll would have made an attempt.
        expect(attemptsSinceRelease).toBe(0);
        await next.release();
      } finally {
        await Promise.all([holder.close(), waiter.close()]);
      }
    });

    it('pages through the locks of every master, and the terminus indicator pings each master by its address', async () => {
      const handed = await openClient(name, redisCluster.cluster.nodes);
      try {
        const nodes = await operate(handed);
        expect(nodes.map((node) => node.address).sort()).toEqual(redisCluster.cluster.nodes.map(({ host, port }) => `${host}:${port}`).sort());
        expect(nodes.every((node) => node.status === 'up')).toBe(true);
      } finally {
        handed.close();
      }
    });

    it('renews a watchdog batch in one call per master, with an outcome for every lock', async () => {
      const handed = await openClient(name, redisCluster.cluster.nodes);
      try {
        const scripts = new LockScripts(handed.client as never);
        expect(await scripts.perMasterRenewals()).toBe(true); // learns that every master runs Redis 7
        // One call per master.
        expect(await renewHeldBatch(scripts, redisCluster.admin, 60)).toBe(3);
      } finally {
        handed.close();
        await Promise.all(Array.from({ length: 60 }, (_, i) => redisCluster.admin.del(`lock:{batch:${i}}`)));
      }
    });
  });
});

describe('the built package', () => {
  it('imports neither iovalkey nor GLIDE statically; only the GLIDE driver names GLIDE, which it loads when handed a GLIDE client', () => {
    const dist = fileURLToPath(new URL('../dist/', import.meta.url));
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThan(20);
    const text = (file: string) => readFileSync(join(dist, file), 'utf8');
    const importing = files.filter((file) => /(?:from\s*|import\s*\(\s*|require\s*\(\s*)['"](?:iovalkey|@valkey\/[^'"]+)['"]/.test(text(file)));
    expect(importing).toEqual([]);
    expect(files.filter((file) => /iovalkey['"]|@valkey\//.test(text(file))).map((file) => file.replaceAll('\\', '/'))).toEqual(['core/stores/redis/drivers/glide-driver.js']);
  });
});

describe('a GLIDE client handed in', () => {
  it('is refused at startup, naming the option, when it does not show the configuration the release messages need', async () => {
    const handed = await openClient('GLIDE', redisUrl());
    try {
      // As a GLIDE release that kept its configuration elsewhere would be.
      Object.defineProperty(handed.client, 'config', { value: undefined });
      await expect(createLockApp({ redis: handed.client })).rejects.toThrow(/Option "redis" must be a Valkey GLIDE client that shows the configuration it was created with/);
    } finally {
      handed.close();
    }
  });

  it('is refused at startup with waitForReplicas, which it cannot serve', async () => {
    const handed = await openClient('GLIDE', redisUrl());
    try {
      await expect(createLockApp({ redis: handed.client, waitForReplicas: { replicas: 1, timeout: 100 } })).rejects.toThrow(/waitForReplicas.*not yet a Cluster, a node-redis client or a Valkey GLIDE client/s);
    } finally {
      handed.close();
    }
  });
});
