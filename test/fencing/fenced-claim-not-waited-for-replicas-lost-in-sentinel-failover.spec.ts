import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { pidOf, useSentinelPair } from '../support/sentinel-pair.js';
import { pendingAfter } from '../support/lock-app.js';

/**
 * Found by review (thirty-fourth session, fencing): with `waitForReplicas`, an acquisition is
 * handed out only once a replica has the lock and its fencing counter, but the module's
 * `FencedRedis` answered a read for update (the claim that keeps the holder's token as the key's)
 * and a fenced write as soon as the master had them. A Sentinel failover to a replica that had
 * not received the claim dropped it: the promoted master kept no token for the key, the older
 * holder's late write (a lower token) was accepted, and the newer holder's write, computed from
 * the value it read before, then overwrote it: the lost update the claim exists to prevent, with
 * every call reported done. Now the module's fenced writes and claims wait for the replicas as
 * its acquisitions do; one they do not confirm in time rejects with a `RedisLockError` naming
 * `waitForReplicas` (a claim reads nothing to write back).
 */
describe('fenced writes and reads for update under waitForReplicas, on Sentinel', () => {
  const pair = useSentinelPair();
  const modules: TestingModule[] = [];

  afterAll(async () => {
    for (const moduleRef of modules) await moduleRef.close();
  });

  async function open(waitForReplicas: RedisLockModuleOptions['waitForReplicas']): Promise<{ locks: LockService; fenced: FencedRedis }> {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: { sentinels: pair.deployment.sentinels, name: pair.deployment.name, failoverDetector: true }, ttl: 10_000, waitForReplicas })],
    }).compile();
    await moduleRef.init();
    modules.push(moduleRef);
    const fenced = moduleRef.get(FencedRedis);
    const locks = moduleRef.get(LockService);
    // Connections up and scripts cached before the replica is frozen.
    const warm = await locks.acquire(`warm:${modules.length}`);
    await fenced.set(`warm:{${modules.length}}`, 1, warm.fencingToken);
    await fenced.get(`warm:{${modules.length}}`, warm.fencingToken);
    await warm.release();
    return { locks, fenced };
  }

  /** Freezes the replica (SIGSTOP) while `during` runs: it answers nothing, replication included. */
  async function withFrozenReplica<T>(during: () => Promise<T>): Promise<T> {
    process.kill(pair.replicaPid, 'SIGSTOP');
    try {
      return await during();
    } finally {
      process.kill(pair.replicaPid, 'SIGCONT');
    }
  }

  it('a read for update resolves only once the replica has its claim', { timeout: 30_000 }, async () => {
    const { locks, fenced } = await open({ replicas: 1, timeout: 5_000 });
    const older = await locks.acquire('account:1');
    await fenced.set('balance:{1}', 100, older.fencingToken);
    await older.release();
    const newer = await locks.acquire('account:1');
    const read = await withFrozenReplica(async () => {
      const claim = fenced.get('balance:{1}', newer.fencingToken);
      expect(await pendingAfter(claim, 300)).toBe(true);
      return { claim };
    }).then(({ claim }) => claim);
    expect(read).toBe('100');
    expect(await pair.replica.hget('{1}:fence', 'balance:{1}')).toBe(String(newer.fencingToken));
    await newer.release();
  });

  it('so do set() and hset(), once the replica has the data and its token', { timeout: 30_000 }, async () => {
    const { locks, fenced } = await open({ replicas: 1, timeout: 5_000 });
    const lock = await locks.acquire('report');
    const { set, hset } = await withFrozenReplica(async () => {
      const set = fenced.set('report:{daily}', 'v1', lock.fencingToken);
      const hset = fenced.hset('report:{weekly}', { a: 1, b: 2 }, lock.fencingToken);
      expect(await pendingAfter(Promise.race([set, hset]), 300)).toBe(true);
      return { set, hset };
    });
    await Promise.all([set, hset]);
    expect(await pair.replica.get('report:{daily}')).toBe('v1');
    expect(await pair.replica.hgetall('report:{weekly}')).toEqual({ a: '1', b: '2' });
    expect(await pair.replica.hget('{daily}:fence', 'report:{daily}')).toBe(String(lock.fencingToken));
    expect(await pair.replica.hget('{weekly}:fence', 'report:{weekly}')).toBe(String(lock.fencingToken));
    await lock.release();
  });

  it('a claim the replica does not confirm in time rejects naming waitForReplicas: a failover then loses it, and the older holder\'s write is accepted', { timeout: 90_000 }, async () => {
    const { locks, fenced } = await open({ replicas: 1, timeout: 200 });
    const older = await locks.acquire('account:7');
    await fenced.set('balance:{7}', 100, older.fencingToken);
    await older.release(); // its holder paused past its lease: it still has its token, 41 say
    const newer = await locks.acquire('account:7'); // 42, on the replica too (waitForReplicas)
    expect(newer.fencingToken).toBeGreaterThan(older.fencingToken);
    const masterPid = await pidOf(pair.master);
    const oldPort = await pair.deployment.masterPortNow();
    await withFrozenReplica(async () => {
      // The master drops its link to the frozen replica, which cannot connect again to read the
      // claim (a frozen replica still receives into its socket what the master sends it).
      await pair.master.call('CLIENT', 'KILL', 'TYPE', 'replica');
      const claim = fenced.get('balance:{7}', newer.fencingToken).then(
        () => undefined,
        (error: unknown) => error,
      );
      const error = await claim;
      expect(error).toBeInstanceOf(RedisLockError);
      expect((error as Error).message).toMatch(/FencedRedis\.get\(\): the read for update of "balance:\{7\}" claimed it with fencing token \d+ on the master, but 0 of 1 replica confirmed it within 200 ms \(waitForReplicas\)/);
      expect(await pair.master.hget('{7}:fence', 'balance:{7}')).toBe(String(newer.fencingToken)); // on the master only
      process.kill(masterPid, 'SIGKILL'); // the master dies before its replica got the claim
    });
    // Sentinel promotes the replica, which never received the claim.
    let newPort = oldPort;
    await expect
      .poll(async () => {
        newPort = await pair.deployment.masterPortNow();
        if (newPort === oldPort) return false;
        const node = new Redis(newPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
        try {
          return (await node.role())[0] === 'master';
        } catch {
          return false;
        } finally {
          node.disconnect();
        }
      }, { timeout: 60_000, interval: 200 })
      .toBe(true);
    const promoted = new Redis(newPort, '127.0.0.1');
    try {
      expect(await promoted.hget('{7}:fence', 'balance:{7}')).toBe(String(older.fencingToken));
      // What the rejection warned of: the older holder's late write is accepted there.
      await new FencedRedis(promoted).set('balance:{7}', 110, older.fencingToken);
      expect(await promoted.get('balance:{7}')).toBe('110');
    } finally {
      promoted.disconnect();
    }
  });
});
