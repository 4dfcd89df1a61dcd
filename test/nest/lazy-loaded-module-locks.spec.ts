import { Injectable, Module } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * A feature module loaded with `LazyModuleLoader`, using the application's global
 * `RedisLockModule` (the remedy docs/configuration.md gives: Nest runs no lifecycle hook of a
 * lazily loaded module, so a lock module of its own would never be closed). Its class providers
 * get the root module's `LockService`, `@Locked` methods included, and `app.close()` gives back
 * what they hold.
 */
describe("a module loaded with LazyModuleLoader, on the application's global RedisLockModule", () => {
  const redis = useRedis();

  @Injectable()
  class Reports {
    constructor(readonly locks: LockService) {}
    /** The lock keys in Redis while it runs. */
    @Locked('report:<0>')
    async build(id: string): Promise<string[]> {
      return redis.keys(`*{report:${id}}`);
    }
  }

  /** What the locks left in Redis, but their fencing counters (kept, docs/redis-data.md). */
  async function lockKeys(): Promise<string[]> {
    return (await redis.keys('*')).filter((key) => !key.endsWith(':fence'));
  }

  it.each([
    ['forRoot()', () => RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, keyPrefix: 'global:' })],
    ['forRootAsync()', () => RedisLockModule.forRootAsync({ isGlobal: true, useFactory: async () => ({ redis: redisUrl(), keyPrefix: 'global:' }) })],
  ])('with %s: its @Locked methods lock, and app.close() gives back what they hold', async (_, locksModule) => {
    @Module({ imports: [locksModule()] })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await app.init();
    onTestFinished(() => app.close());
    @Module({ providers: [Reports], exports: [Reports] })
    class LazyReports {}
    const lazy = await app.get(LazyModuleLoader).load(() => LazyReports);
    const reports = lazy.get(Reports);
    expect(reports.locks).toBe(app.get(LockService));
    expect(await reports.build('b')).toEqual(['global:{report:b}']);
    const held = await reports.locks.acquire('report:held');
    await app.close();
    expect(await lockKeys()).toEqual([]);
    expect(held.signal.aborted).toBe(true);
  });
});
