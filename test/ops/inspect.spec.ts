import { hostname } from 'node:os';
import { Injectable, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked, LockKeyError, LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, useLockApps } from '../support/lock-app.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { parseHolder } from '../../lib/core/engine/holder.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('LockService.inspect()', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('says who holds a lock, for how long, behind how many waiters, with which fencing token', async () => {
    const holder = await app({ instanceName: 'worker-7' });
    const other = await app();
    const before = Date.now();
    const lock = await holder.locks.acquire('report', { ttl: 5_000, label: 'nightly report' });
    const waiting = other.locks.acquire('report', { waitTimeout: 10_000 });
    await expect.poll(async () => (await other.locks.inspect('report')).waiters).toBe(1);
    const seen = await other.locks.inspect('report');
    expect(seen).toMatchObject({
      key: 'report',
      held: true,
      fencingToken: lock.fencingToken,
      waiters: 1,
      holder: { host: hostname().slice(0, 64), pid: process.pid, instance: 'worker-7', label: 'nightly report' },
    });
    expect(seen.ttlMs).toBeGreaterThan(0);
    expect(seen.ttlMs).toBeLessThanOrEqual(5_000);
    expect(seen.holder!.since).toBeGreaterThanOrEqual(before - 5);
    expect(seen.holder!.since).toBeLessThanOrEqual(Date.now());
    await lock.release();
    const next = await waiting;
    const now = await holder.locks.inspect('report');
    expect(now).toMatchObject({ held: true, fencingToken: next.fencingToken, waiters: 0 });
    expect(now.holder).toMatchObject({ pid: process.pid });
    expect(now.holder!.instance).toBeUndefined();
    await next.release();
    expect(await holder.locks.inspect('report')).toEqual({ key: 'report', held: false, fencingToken: next.fencingToken, waiters: 0 });
    expect(await holder.locks.inspect('never-taken')).toEqual({ key: 'never-taken', held: false, waiters: 0 });
  });

  it('bounds and cleans a hostile label, and keeps ":" out of the owner token', async () => {
    const { locks } = await app();
    const hostile = `<script>alert("x")</script>\n\u2028:${'é'.repeat(5_000)}`;
    const lock = await locks.acquire('hostile', { label: hostile });
    const token = (await redis.get('lock:{hostile}'))!;
    expect(token).not.toContain(':');
    expect(token).toMatch(/^[0-9a-f]{32}\.[A-Za-z0-9_-]+\.[0-9a-z]+$/);
    expect(token.length).toBeLessThan(500);
    const { holder } = await locks.inspect('hostile');
    expect(Array.from(holder!.label!).length).toBeLessThanOrEqual(64);
    expect(holder!.label).toMatch(/^<script>alert\("x"\)<\/script>  :é+…$/);
    await lock.release();
  });

  it('ignores a lock value written by something else than this library', async () => {
    const { locks } = await app();
    await redis.set('lock:{foreign}', 'abc.not-json.zz', 'PX', 5_000);
    expect(await locks.inspect('foreign')).toMatchObject({ held: true, waiters: 0 });
    expect((await locks.inspect('foreign')).holder).toBeUndefined();
  });

  it('names the @Locked method as the holder and rejects bad names', async () => {
    @Injectable()
    class Reports {
      constructor(readonly locks: LockService) {}
      @Locked('reports:<0>')
      async build(_id: string) {
        return this.locks.inspect(`reports:${_id}`);
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Reports] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      const seen = await moduleRef.get(Reports).build('42');
      expect(seen.holder).toMatchObject({ label: 'Reports.build', pid: process.pid });
      const locks = moduleRef.get(LockService);
      await expect(locks.acquire('x', { name: 'n'.repeat(129) })).rejects.toBeInstanceOf(InvalidLockOptionsError);
      await expect(locks.acquire('x', { label: 42 as unknown as string })).rejects.toThrow(/Option "label"/);
      await expect(locks.inspect('')).rejects.toBeInstanceOf(LockKeyError);
    } finally {
      await moduleRef.close();
    }
    await expect(app({ instanceName: '' })).rejects.toThrow(/Option "instanceName"/);
  });
});

type LockModule = { module: DynamicModule; close?: () => Promise<unknown> };
describe.each([
  ['Redis through ioredis', async (): Promise<LockModule> => ({ module: RedisLockModule.forRoot({ redis: redisUrl(), instanceName: 'sem-app' }) })],
  [
    'Redis through node-redis',
    async (): Promise<LockModule> => {
      const client = await nodeRedisClient(redisUrl());
      return { module: RedisLockModule.forRoot({ redis: client as never, instanceName: 'sem-app' }), close: () => client.close() };
    },
  ],
  ['the in-memory store', async (): Promise<LockModule> => ({ module: RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), instanceName: 'sem-app' }) })],
])('LockService.inspect() of a semaphore on %s', (_store, lockModule) => {
  useRedis();

  it('shows its holders, permits used, limit and waiters, and nothing once idle', async () => {
    const { module, close } = await lockModule();
    const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    try {
      expect(await locks.inspect('pool')).toEqual({ key: 'pool', held: false, waiters: 0 });
      const big = await locks.acquire('pool', { limit: 3, permits: 2, ttl: 5_000, label: 'BigExport.run' });
      const small = await locks.acquire('pool', { limit: 3, ttl: 5_000, label: 'SmallExport.run' });
      const waiting = locks.acquire('pool', { limit: 3, permits: 2, waitTimeout: 30_000, label: 'Waiting.run' });
      // Settled by the test; a failing test must not leave an unhandled rejection at shutdown.
      waiting.catch(() => undefined);
      await expect.poll(async () => (await locks.inspect('pool')).semaphore?.waiters).toBe(1);
      const seen = await locks.inspect('pool');
      // The mutex of the same name is not held: its fields stay those of the mutex.
      expect(seen).toMatchObject({ key: 'pool', held: false, waiters: 0, semaphore: { limit: 3, used: 3, waiters: 1 } });
      const holders = [...seen.semaphore!.holders].sort((a, b) => b.permits - a.permits);
      expect(holders).toMatchObject([
        { permits: 2, fencingToken: big.fencingToken, holder: { label: 'BigExport.run', instance: 'sem-app', pid: process.pid } },
        { permits: 1, fencingToken: small.fencingToken, holder: { label: 'SmallExport.run', instance: 'sem-app', pid: process.pid } },
      ]);
      for (const holder of holders) {
        expect(holder.ttlMs).toBeGreaterThan(0);
        expect(holder.ttlMs).toBeLessThanOrEqual(5_000);
      }
      await big.release();
      const granted = await waiting;
      await expect.poll(async () => (await locks.inspect('pool')).semaphore).toMatchObject({ used: 3, waiters: 0, limit: 3 });
      expect((await locks.inspect('pool')).semaphore!.holders.map((holder) => holder.holder?.label).sort()).toEqual(['SmallExport.run', 'Waiting.run']);
      await small.release();
      await granted.release();
      const idle = await locks.inspect('pool');
      expect(idle.semaphore).toBeUndefined();
      expect(idle).toMatchObject({ held: false, fencingToken: granted.fencingToken });
      // A mutex and a semaphore of one name are shown side by side.
      const mutex = await locks.acquire('pool', { label: 'Mutex.run' });
      const permit = await locks.acquire('pool', { limit: 2, label: 'Permit.run' });
      expect(await locks.inspect('pool')).toMatchObject({ held: true, holder: { label: 'Mutex.run' }, semaphore: { used: 1, limit: 2, holders: [{ holder: { label: 'Permit.run' } }] } });
      await mutex.release();
      await permit.release();
    } finally {
      await moduleRef.close();
      await close?.();
    }
  });
});

describe('LockService.inspect() of a semaphore whose holder crashed', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('leaves out a holder whose permit key is gone', async () => {
    const { locks } = await app();
    const alive = await locks.acquire('crashy', { limit: 2, label: 'Alive.run' });
    const crashed = await locks.acquire('crashy', { limit: 2, label: 'Crashed.run' });
    const tokens = await redis.hkeys('lock:{crashy}:holders');
    const crashedToken = tokens.find((token) => parseHolder(token)?.label === 'Crashed.run')!;
    await redis.del(`lock:{crashy}:permit:${crashedToken}`);
    const seen = await locks.inspect('crashy');
    expect(seen.semaphore!.holders.map((holder) => holder.holder?.label)).toEqual(['Alive.run']);
    expect(seen.semaphore!.used).toBe(1);
    await alive.release();
    await crashed.release().catch(() => undefined);
  });
});
