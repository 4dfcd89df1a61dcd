import { Cluster, type Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { LockNotAcquiredError, RedisUnavailableError, type Lock, type LockService, type MultiKeyLock } from '../../lib/index.js';
import { openClient } from '../support/handed-clients.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { nodeRedisCluster } from '../support/node-redis.js';
import { slotMasters, useRedisCluster } from '../support/redis-cluster.js';

type Nodes = { host: string; port: number }[];
/**
 * Each client handed to the module, and how the call that met the split keys ends for it: ioredis
 * asks again itself (TRYAGAIN after 100 ms, ASK, MOVED) until its `maxRedirections`; node-redis
 * gives the first TRYAGAIN back; GLIDE asks again until its request timeout (2 s here), past the
 * library's 1 s bound for a `tryAcquire()`'s answer.
 */
const CLIENTS: Record<string, { open(nodes: Nodes): Promise<{ client: unknown; close: () => unknown }>; said: RegExp; waited: RegExp }> = {
  'ioredis 5': {
    open: async (nodes) => {
      const client = new Cluster(nodes);
      client.on('error', () => undefined);
      return { client, close: () => client.disconnect() };
    },
    said: /: Redis could not be asked \(Too many Cluster redirections\. Last error: ReplyError: (?:TRYAGAIN|ASK|MOVED) /,
    // Redis answered every time, redirecting or refusing: it said "Redis did not answer (Too many ...)".
    waited: /\): Redis refused it \(Too many Cluster redirections\. Last error: ReplyError: (?:TRYAGAIN|ASK|MOVED) [^)]*\)\. Raise waitTimeout/,
  },
  'node-redis 6': {
    open: async (nodes) => {
      const client = await nodeRedisCluster(nodes, 6);
      return { client, close: () => client.close() };
    },
    said: /: Redis could not be asked \(TRYAGAIN Multiple keys request during rehashing of slot\)\.$/,
    waited: /\): Redis refused it \(TRYAGAIN Multiple keys request during rehashing of slot\)\. Raise waitTimeout/,
  },
  GLIDE: {
    open: (nodes) => openClient('GLIDE', nodes),
    said: /: Redis did not answer within 1000 ms\.$/,
    // Said once: it read "Redis did not answer (Redis did not answer the acquire of lock ... within 1000 ms.)".
    waited: /\(\d+ ms after the call\): Redis did not answer the acquire of lock "[^"]+" within 1000 ms\. Raise waitTimeout/,
  },
};

/** The lock kinds whose keys share the lock's slot (`{K}`), each with its acquisition (no `waitTimeout`: `tryAcquire()`). */
const KINDS: Record<string, (locks: LockService, key: string, waitTimeout?: number) => Promise<Lock | MultiKeyLock | null>> = {
  mutex: (locks, key, waitTimeout) => (waitTimeout === undefined ? locks.tryAcquire(key) : locks.acquire(key, { waitTimeout })),
  semaphore: (locks, key, waitTimeout) => (waitTimeout === undefined ? locks.tryAcquire(key, { limit: 2 }) : locks.acquire(key, { limit: 2, waitTimeout })),
  'read lock': (locks, key, waitTimeout) => (waitTimeout === undefined ? locks.tryAcquire(key, { mode: 'read' }) : locks.acquire(key, { mode: 'read', waitTimeout })),
  // The key whose slot is split, and one elsewhere, taken first (canonical order) and given back.
  'several keys': (locks, key, waitTimeout) => (waitTimeout === undefined ? locks.tryAcquire([key, `a-${key}`]) : locks.acquire([key, `a-${key}`], { waitTimeout })),
};

/** Every kind through ioredis; a mutex and several keys through the other clients. */
const CASES = [...Object.keys(KINDS).map((kind) => ['ioredis 5', kind] as const), ...['node-redis 6', 'GLIDE'].flatMap((client) => ['mutex', 'several keys'].map((kind) => [client, kind] as const))];

/**
 * docs/guarantees.md ("When Redis is down") and the errors table of docs/locks.md: on a Redis
 * Cluster, `TRYAGAIN` passes. Redis answers it to a command whose keys a slot migration split
 * between the two masters (a `redis-cli --cluster reshard` moving that slot, key by key): the
 * lock's scripts declare every key of the lock, all in its slot (`{K}`), and once one of them
 * (here its fencing counter, left by an earlier holder) has moved and the others have not, the
 * source answers ASK and the target TRYAGAIN until the slot's migration ends. A waiting call is
 * asked again and gets the lock once the slot is whole again, its fencing token past the counter
 * that moved; `tryAcquire()` rejects with a `RedisUnavailableError` (503 over HTTP). A raw client
 * sees TRYAGAIN on the target (ASKING) before and after each call asserted on.
 */
describe('Redis Cluster: an acquisition whose keys a slot migration split between two masters (TRYAGAIN)', () => {
  const own = useRedisCluster();

  it.each(CASES)('%s, %s: tryAcquire() rejects RedisUnavailableError, acquire() is asked again and gets the lock once the slot is whole', { timeout: 60_000 }, async (client, kind) => {
    const { cluster, admin } = own;
    const handed = await CLIENTS[client]!.open(cluster.nodes);
    onTestFinished(async () => void (await handed.close()));
    const app: LockApp = await createLockApp({ redis: handed.client as never });
    onTestFinished(() => app.close());
    const key = `split:${kind.replace(' ', '-')}:${client.replace(/\W/g, '')}`;
    const lockKey = `lock:{${key}}`;
    const take = KINDS[kind]!;
    const tokenOf = (lock: Lock | MultiKeyLock) => ('fencingTokens' in lock ? lock.fencingTokens[key] : lock.fencingToken);
    // An earlier holder: its fencing counter stays in Redis.
    const first = await take(app.locks, key, 5_000);
    const firstToken = tokenOf(first!);
    await first!.release();
    const slot = clusterSlot(lockKey);
    const { source, target, src, dst } = await slotMasters(admin, slot);
    onTestFinished(() => {
      src.disconnect();
      dst.disconnect();
    });
    const [host, port] = target.address.split(':');
    const left = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
    expect(left).toContain(`${lockKey}:fence`);
    let whole = false;
    const makeWhole = async () => {
      if (whole) return;
      whole = true;
      const rest = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (rest.length > 0) await src.migrate(host!, port!, '', 0, 5_000, 'KEYS', ...rest);
      for (const node of [dst, src]) await node.cluster('SETSLOT', slot, 'NODE', target.id);
    };
    onTestFinished(makeWhole);
    // The reshard of this slot begins, and moves the fencing counter first.
    await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
    await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
    await src.migrate(host!, port!, `${lockKey}:fence`, 0, 5_000);
    const splitKeys = [lockKey, `${lockKey}:fence`];
    expect(await answersTryAgain(dst, splitKeys)).toBe(true);

    const tried = await take(app.locks, key).then(
      (lock) => lock,
      (error: unknown) => error as Error,
    );
    expect(await answersTryAgain(dst, splitKeys)).toBe(true);
    expect(tried).toBeInstanceOf(RedisUnavailableError);
    expect((tried as Error).message).toMatch(/^tryAcquire\(/);
    expect((tried as Error).message).toMatch(CLIENTS[client]!.said);

    const attempts = countAttempts(app.locks);
    onTestFinished(() => attempts.stop());
    const short = await take(app.locks, key, 1_000).then(
      (lock) => lock,
      (error: unknown) => error as Error,
    );
    expect(short).toBeInstanceOf(LockNotAcquiredError);
    expect((short as Error).message).toMatch(CLIENTS[client]!.waited);
    // Nothing half-done: the other key a call of several keys took first was given back.
    if (kind === 'several keys') await expect.poll(() => admin.exists(`lock:{a-${key}}`), { timeout: 5_000, interval: 100 }).toBe(0);
    const waiter = take(app.locks, key, 30_000);
    await expect.poll(() => attempts.count, { timeout: 10_000, interval: 50 }).toBeGreaterThan(2);
    expect(await answersTryAgain(dst, splitKeys)).toBe(true);
    await makeWhole();
    const lock = (await waiter)!;
    expect(lock.held).toBe(true);
    // The counter that moved gave its token, past the earlier holder's (one the caller gave up on,
    // that GLIDE still asked again once the slot was whole, may have taken one before it).
    expect(tokenOf(lock)).toBeGreaterThan(firstToken!);
    expect(Number(await admin.get(`${lockKey}:fence`))).toBeGreaterThanOrEqual(tokenOf(lock)!);
    expect((await src.cluster('GETKEYSINSLOT', slot, 100)) as string[]).toEqual([]);
    await lock.release();
  });
});

/** Whether the importing master answers a command on `keys` (asked with ASKING) TRYAGAIN. */
async function answersTryAgain(dst: Redis, keys: string[]): Promise<boolean> {
  const replies = await dst.pipeline().call('ASKING').exists(...keys).exec();
  const error = replies?.[1]?.[0];
  return error instanceof Error && /^TRYAGAIN\b/.test(error.message);
}
