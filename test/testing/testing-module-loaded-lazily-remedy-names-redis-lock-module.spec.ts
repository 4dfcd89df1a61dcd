import { describe, expect, it, onTestFinished } from 'vitest';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { appLoadingLazily, warningsOf } from '../support/lazily-loading-app.js';

/**
 * Found by review. A lock module made after the HTTP server started listening (one a route loads
 * with `LazyModuleLoader`, whose hooks Nest never runs) is warned of, with the remedy: import it
 * in the root module. For `RedisLockTestingModule.forRoot()` the remedy named `RedisLockModule`
 * ("Import RedisLockModule in the root module, with isGlobal: true"): an application that runs
 * its locks in memory, with no Redis, was told to take a module that needs one. It names the
 * module the application used.
 */
describe('RedisLockTestingModule.forRoot() imported by a module a route loads lazily', () => {
  it('is warned of with the testing module as the remedy, not RedisLockModule', async () => {
    const { logs, url } = await appLoadingLazily([RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })], [], async (locks) => {
      // Nest will not close it: the test does, as the remedy's root module would be.
      onTestFinished(async () => {
        await locks.beforeApplicationShutdown();
        await locks.onApplicationShutdown();
      });
      await (await locks.acquire('report:1')).release();
      return 'done';
    });
    expect(await (await fetch(`${url}/lazy`)).text()).toBe('done');
    const warnings = warningsOf(logs);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('RedisLockTestingModule.forRoot() was loaded after the HTTP server started listening');
    // Before the fix: 'Import RedisLockModule in the root module, with isGlobal: true, ...'.
    expect(warnings[0]).toContain('Import RedisLockTestingModule in the root module, with isGlobal: true');
    expect(warnings[0]).not.toMatch(/\bRedisLockModule\b/);
  });
});
