import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review. A lock module made after the HTTP server started listening (one a route loads
 * with `LazyModuleLoader`, whose hooks Nest never runs) is warned of, with the remedy: import it
 * in the root module. For `RedisLockTestingModule.forRoot()` the remedy named `RedisLockModule`
 * ("Import RedisLockModule in the root module, with isGlobal: true"): an application that runs
 * its locks in memory, with no Redis, was told to take a module that needs one. It names the
 * module the application used.
 */
describe('RedisLockTestingModule.forRoot() imported by a module a route loads lazily', () => {
  @Injectable()
  class Reports {
    constructor(readonly locks: LockService) {}
  }

  it('is warned of with the testing module as the remedy, not RedisLockModule', async () => {
    const locks = new InMemoryLocks();
    @Module({ imports: [RedisLockTestingModule.forRoot({ locks })], providers: [Reports], exports: [Reports] })
    class LazyReports {}
    @Controller()
    class ReportsController {
      constructor(private readonly loader: LazyModuleLoader) {}
      @Get('report')
      async report(): Promise<string> {
        const service = (await this.loader.load(() => LazyReports)).get(Reports).locks;
        // Nest will not close it: the test does, as the remedy's root module would be.
        onTestFinished(async () => {
          await service.beforeApplicationShutdown();
          await service.onApplicationShutdown();
        });
        await (await service.acquire('report:1')).release();
        return 'done';
      }
    }
    const logs = new CapturedLogs();
    const app = await createHttpApp({ controllers: [ReportsController] }, { logs, logger: logs });
    onTestFinished(() => app.close());
    const url = await listenOnLoopback(app);
    expect(await (await fetch(`${url}/report`)).text()).toBe('done');
    const warnings = logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('RedisLockTestingModule.forRoot() was loaded after the HTTP server started listening');
    // Before the fix: 'Import RedisLockModule in the root module, with isGlobal: true, ...'.
    expect(warnings[0]).toContain('Import RedisLockTestingModule in the root module, with isGlobal: true');
    expect(warnings[0]).not.toMatch(/\bRedisLockModule\b/);
  });
});
