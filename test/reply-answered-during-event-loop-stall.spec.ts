import { Cluster, Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { settleWithin } from '../lib/core/time/settle-within.js';
import { createLockApp, type LockApp } from './support/lock-app.js';
import { blockEventLoop, stallAfterCommand } from './support/mechanism.js';
import { useOwnRedis } from './support/redis.js';
import { useRedisCluster } from './support/redis-cluster.js';

/**
 * A reply Redis sent while this process' event loop was stalled (a long GC pause, a busy CPU)
 * past the call's bound (an attempt's 1 s grace) is the call's answer: the bound's timer is due
 * when the stall ends, and timers run before the loop reads its sockets, so the bound is decided
 * after the loop's next poll for I/O, as a quorum round's is. Each case blocks the loop longer
 * than the bound right after the call's command is written: Redis answers during the block.
 */
describe('a reply Redis sent while the event loop stalled past the call bound', () => {
  // A server of its own: its command counts are this file's.
  const own = useOwnRedis();

  /** An application on a client of the test's, which blocks the event loop 1.5 s once, right after writing the next `command`. */
  async function appStallingAfter(): Promise<{ app: LockApp; stallAfterNext(command: string): void; calls(command: string): Promise<number> }> {
    const client = new Redis(own.url());
    onTestFinished(() => void client.disconnect());
    const app = await createLockApp({ redis: client, ttl: 30_000 });
    onTestFinished(() => app.close());
    const stall = stallAfterCommand(client, 1_500);
    // Connected, and the scripts loaded: only the command under test is sent.
    await (await app.locks.acquire('warm-up')).release();
    await app.locks.isLocked('warm-up');
    const calls = async (command: string): Promise<number> => {
      const stats = await own.redis().info('commandstats');
      return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    };
    return { app, stallAfterNext: (command) => stall.arm(command), calls };
  }

  it('tryAcquire() gets the lock Redis granted, asked once', async () => {
    const { app, stallAfterNext, calls } = await appStallingAfter();
    const before = await calls('evalsha');
    stallAfterNext('evalsha');
    const lock = await app.locks.tryAcquire('stalled-try');
    expect(lock?.held).toBe(true);
    expect((await calls('evalsha')) - before).toBe(1);
    await lock?.release();
  });

  it('acquire() whose wait is shorter than the grace gets the lock Redis granted, asked once', async () => {
    const { app, stallAfterNext, calls } = await appStallingAfter();
    const before = await calls('evalsha');
    stallAfterNext('evalsha');
    const lock = await app.locks.acquire('stalled-acquire', { waitTimeout: 100 });
    expect(lock.held).toBe(true);
    expect((await calls('evalsha')) - before).toBe(1);
    await lock.release();
  });

  it('isLocked() gets Redis answer, asked once', async () => {
    const { app, stallAfterNext, calls } = await appStallingAfter();
    const lock = await app.locks.acquire('stalled-read');
    onTestFinished(() => lock.release());
    const before = await calls('evalsha');
    stallAfterNext('evalsha');
    expect(await app.locks.isLocked('stalled-read')).toBe(true);
    expect((await calls('evalsha')) - before).toBe(1);
  });

  it('release() of a lock whose lease ends within the grace is confirmed by Redis answer', async () => {
    const { app, stallAfterNext, calls } = await appStallingAfter();
    // A lease of 300 ms: the release waits for its answer a last attempt's grace (1 s) at most.
    const lock = await app.locks.acquire('stalled-release', { ttl: 300, autoRenew: false });
    const before = await calls('evalsha');
    stallAfterNext('evalsha');
    await lock.release();
    expect((await calls('evalsha')) - before).toBe(1);
    expect(await own.redis().exists('lock:{stalled-release}')).toBe(0);
  });
});

/**
 * What bounds the other replies (a renewal tick, a scan page of the lock board's list, a health
 * check's ping, a multi-key release's last grace): `settleWithin`, decided after the next poll too.
 */
describe('settleWithin() of a reply Redis sent while the event loop stalled past its bound', () => {
  const own = useOwnRedis();

  it('resolves the reply, not TIMED_OUT', async () => {
    const client = new Redis(own.url());
    onTestFinished(() => void client.disconnect());
    await client.ping();
    const reply = client.ping();
    const settled = settleWithin(reply, 100);
    blockEventLoop(500);
    expect(await settled).toBe('PONG');
  });
});

describe('a reply a Redis Cluster master sent while the event loop stalled past the call bound', () => {
  const own = useRedisCluster();

  it('tryAcquire() gets the lock the master granted, asked once', { timeout: 30_000 }, async () => {
    const client = new Cluster(own.cluster.nodes);
    onTestFinished(() => void client.disconnect());
    const app = await createLockApp({ redis: client, ttl: 30_000 });
    onTestFinished(() => app.close());
    const stall = stallAfterCommand(client, 1_500);
    // Connected to the key's master, and the scripts loaded there.
    await (await app.locks.acquire('stalled-cluster')).release();
    const calls = async (): Promise<number> => {
      let sum = 0;
      for (const master of own.admin.nodes('master')) sum += Number(/cmdstat_evalsha:calls=(\d+)/.exec(await master.info('commandstats'))?.[1] ?? 0);
      return sum;
    };
    const before = await calls();
    stall.arm('evalsha');
    const lock = await app.locks.tryAcquire('stalled-cluster');
    expect(lock?.held).toBe(true);
    expect((await calls()) - before).toBe(1);
    await lock?.release();
  });
});
