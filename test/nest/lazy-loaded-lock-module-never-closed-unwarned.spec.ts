import { describe, expect, it, onTestFinished } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { createHttpApp } from '../support/http-app.js';
import { appLoadingLazily } from '../support/lazily-loading-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review. A `RedisLockModule.forRoot()` imported by a module that a route loads with
 * `LazyModuleLoader` is never closed: Nest runs no lifecycle hook for a lazily loaded module, at
 * `app.close()` neither (it closes the modules it started with). Its locks stayed held and
 * renewed after the close, its connection open, and the process did not exit on its own, without
 * a word. No library code runs at that close to give them back; what it can do is say so when such
 * a module is made after the HTTP server started listening (the case of a route loading it):
 * a warning that names the remedy, a `RedisLockModule` imported in the root module.
 */
describe('RedisLockModule.forRoot() imported by a module a route loads lazily', () => {
  const redis = useRedis();

  it('is warned of when it is made: app.close() will not give its locks back', async () => {
    const { app, logs, url } = await appLoadingLazily([RedisLockModule.forRoot({ redis: redisUrl() })], [], async (locks) => {
      // Nest will not close it: the test does, as the remedy's root module would be.
      onTestFinished(async () => {
        await locks.beforeApplicationShutdown();
        await locks.onApplicationShutdown();
      });
      const lock = await locks.acquire('export:1');
      await lock.release();
      return 'done';
    });
    expect(await (await fetch(`${url}/lazy`)).text()).toBe('done');
    // Before the fix: nothing logged.
    const warnings = logs.lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('LazyModuleLoader');
    expect(warnings[0]!.message).toContain('RedisLockModule.forRoot()');
    expect(warnings[0]!.message).toContain('isGlobal: true');
    await app.close();
    expect(await redis.exists('lock:{export:1}')).toBe(0);
  });

  it("is not warned of in the root module, nor in a lazy module using the root module's service", async () => {
    const { logs, url } = await appLoadingLazily([], [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], async (locks) => (await locks.inspect('export:2')).held);
    expect(await (await fetch(`${url}/lazy`)).text()).toBe('false');
    // Nor in a second application made while the first one listens (a worker beside it).
    const workerLogs = new CapturedLogs();
    const worker = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })] }, { logs: workerLogs, logger: workerLogs });
    onTestFinished(() => worker.close());
    await worker.init();
    expect([...logs.lines, ...workerLogs.lines].filter((line) => line.level === 'warn')).toEqual([]);
  });
});
