import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Lock } from '../lib/index.js';
import { COMMANDS_PER_WRITE } from '../lib/core/stores/redis/drivers/tick-write-batching.js';
import { useLockApps } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';
import { useRedisCluster } from './support/redis-cluster.js';

/**
 * Redis' own count of the reads it made from its clients' sockets (INFO stats). A read takes
 * whatever arrived, so it counts at most one per write the library made (fewer when writes meet
 * in the socket): the count bounds the writes from above. The server is this file's own, and the
 * INFO call itself is one read.
 */
async function readsDuring(admin: Redis, work: () => Promise<unknown>): Promise<number> {
  const reads = async () => Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))![1]);
  const before = await reads();
  await work();
  return (await reads()) - before - 1;
}

describe('the commands sent in one tick (ioredis)', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const CALLS = 40;
  // The first goes out at once, the others COMMANDS_PER_WRITE to a write.
  const WRITES = 1 + Math.ceil((CALLS - 1) / COMMANDS_PER_WRITE);

  it('go out in a few writes, not one each: 40 acquisitions and 40 releases', async () => {
    const { locks } = await app({ redis: own.url() });
    // Scripts cached and the connection ready before counting.
    await (await locks.acquire('warm-up')).release();
    const keys = Array.from({ length: CALLS }, (_, i) => `batch:${i}`);
    let held: Lock[] = [];
    const acquireReads = await readsDuring(own.redis(), async () => {
      held = await Promise.all(keys.map((key) => locks.acquire(key)));
    });
    expect(held.map((lock) => lock.key)).toEqual(keys);
    expect(acquireReads).toBeGreaterThan(0);
    expect(acquireReads).toBeLessThanOrEqual(WRITES);
    const releaseReads = await readsDuring(own.redis(), () => Promise.all(held.map((lock) => lock.release())));
    expect(releaseReads).toBeLessThanOrEqual(WRITES);
    expect((await own.redis().keys('lock:*')).filter((key) => !key.endsWith(':fence'))).toEqual([]);
  });

  it('the same for a semaphore, whose holders alone are released by a plain HDEL', async () => {
    const { locks } = await app({ redis: own.url() });
    await (await locks.acquire('warm-up', { limit: 2 })).release();
    const keys = Array.from({ length: CALLS }, (_, i) => `batch-sem:${i}`);
    let held: Lock[] = [];
    const acquireReads = await readsDuring(own.redis(), async () => {
      held = await Promise.all(keys.map((key) => locks.acquire(key, { limit: 2 })));
    });
    expect(acquireReads).toBeLessThanOrEqual(WRITES);
    const releaseReads = await readsDuring(own.redis(), () => Promise.all(held.map((lock) => lock.release())));
    expect(releaseReads).toBeLessThanOrEqual(WRITES);
    expect((await own.redis().keys('lock:*')).filter((key) => !key.endsWith(':fence'))).toEqual([]);
  });

  it('leave a lone call on its tick to go out at once, and keep the order of the application’s own commands on a shared client', async () => {
    const client = new Redis(own.url());
    try {
      const { locks } = await app({ redis: client });
      await (await locks.acquire('warm-up')).release();
      // One call a tick: each its own write, none held back for a flush.
      const lone = await readsDuring(own.redis(), async () => {
        const lock = await locks.acquire('lone');
        await lock.release();
      });
      expect(lone).toBe(2);
      // The application's commands on the same tick, before, between and after the library's.
      const replies = await Promise.all([
        client.set('app:a', '1'),
        locks.acquire('shared:1'),
        client.incr('app:a'),
        locks.acquire('shared:2'),
        client.get('app:a'),
      ]);
      expect([replies[0], replies[2], replies[4]]).toEqual(['OK', 2, '2']);
      await Promise.all([replies[1], replies[3]].map((lock) => (lock as Lock).release()));
    } finally {
      client.disconnect();
    }
  });
});

/**
 * Jest's default fake timers (`jest.useFakeTimers()`: the NestJS starter's test runner) fake
 * `process.nextTick` on the test sandbox's own `process`, which the code under test sees as the
 * global one, while Node's streams and sockets keep the real one. Reproduced the same way: the
 * global `process` swapped for a copy whose `nextTick` only queues, run by hand (`runAllTicks`,
 * as `jest.runAllTicks()`), or dropped (`restore`, as `jest.useRealTimers()`).
 */
function fakeNextTick(): { runAllTicks(): void; restore(): void } {
  const real = globalThis.process;
  const queued: (() => void)[] = [];
  const sandbox = Object.create(real, {
    nextTick: { value: (fn: (...args: unknown[]) => void, ...args: unknown[]) => void queued.push(() => fn(...args)), writable: true, configurable: true },
  }) as NodeJS.Process;
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'process')!;
  Object.defineProperty(globalThis, 'process', { value: sandbox, configurable: true, writable: true, enumerable: descriptor.enumerable });
  return {
    runAllTicks: () => {
      while (queued.length > 0) queued.shift()!();
    },
    restore: () => Object.defineProperty(globalThis, 'process', descriptor),
  };
}

describe('the commands sent in one tick, under a faked process.nextTick (Jest fake timers)', () => {
  const own = useOwnRedis();
  const app = useLockApps();

  it('plain ioredis sends two commands of one tick without any nextTick', async () => {
    const client = new Redis(own.url());
    await client.ping();
    const fake = fakeNextTick();
    try {
      expect(await Promise.all([client.set('a', '1'), client.get('a')])).toEqual(['OK', '1']);
      expect(client.stream.writableCorked).toBe(0);
    } finally {
      fake.runAllTicks();
      fake.restore();
      client.disconnect();
    }
  });

  it('go out once the tick’s first command is answered: nothing is left held in the shared client', async () => {
    const client = new Redis(own.url());
    const { locks } = await app({ redis: client });
    await (await locks.acquire('warm-up')).release();
    const fake = fakeNextTick();
    let second: Promise<Lock> | undefined;
    let appGet: Promise<string | null> | undefined;
    try {
      const first = locks.acquire('k1');
      second = locks.acquire('k2');
      appGet = client.get('app:key');
      await first; // its EVALSHA went out at once and Redis answered it: the tick is long over
      // Without a nextTick ever running: the second acquisition and the application's GET answered.
      expect((await second).key).toBe('k2');
      expect(await appGet).toBeNull();
      expect(client.stream.writableCorked).toBe(0);
    } finally {
      fake.runAllTicks();
      fake.restore();
      await Promise.allSettled([second, appGet]);
      client.disconnect();
    }
  });

  it('leave nothing held once the faked ticks are dropped (jest.useRealTimers() without running them)', async () => {
    const client = new Redis(own.url());
    const { locks } = await app({ redis: client });
    await (await locks.acquire('warm-up')).release();
    const fake = fakeNextTick();
    const first = locks.acquire('k1');
    const second = locks.acquire('k2');
    second.catch(() => undefined);
    await first;
    fake.restore();
    // Real ticks again: a lone acquisition and the application's PING go out at once and are answered.
    const [later, pong] = await Promise.all([locks.acquire('k3'), client.ping()]);
    expect([later.key, pong, (await second).key]).toEqual(['k3', 'PONG', 'k2']);
    expect(client.stream.writableCorked).toBe(0);
    client.disconnect();
  });
});

describe('the commands sent in one tick on a Cluster (ioredis)', () => {
  const redisCluster = useRedisCluster();
  const app = useLockApps();

  it('go out in a few writes to each master, every lock taken and released', async () => {
    const client = new Cluster(redisCluster.cluster.nodes);
    try {
      const { locks } = await app({ redis: client });
      // A lock on each master first: scripts cached, every connection ready.
      const warm = Array.from({ length: 12 }, (_, i) => `warm:${i}`);
      await Promise.all((await Promise.all(warm.map((key) => locks.acquire(key)))).map((lock) => lock.release()));
      const masters = redisCluster.admin.nodes('master');
      expect(masters).toHaveLength(3);
      const reads = async () => {
        let sum = 0;
        for (const node of masters) sum += Number(/total_reads_processed:(\d+)/.exec(await node.info('stats'))![1]);
        return sum;
      };
      const keys = Array.from({ length: 40 }, (_, i) => `batch:${i}`);
      const before = await reads();
      const held = await Promise.all(keys.map((key) => locks.acquire(key)));
      // Each master: at most one write for the tick's first command and one per
      // COMMANDS_PER_WRITE after it; the INFO calls of the second count are one read each.
      const used = (await reads()) - before - masters.length;
      expect(used).toBeLessThanOrEqual(masters.length * (1 + Math.ceil(39 / COMMANDS_PER_WRITE)));
      await Promise.all(held.map((lock) => lock.release()));
      const left = await Promise.all(masters.map((node) => node.keys('lock:*')));
      expect(left.flat().filter((key) => !key.endsWith(':fence'))).toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});
