import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * docs/configuration.md: "Every option is validated when the application starts [...] and a bad
 * one fails with an `InvalidLockOptionsError` naming the option and the value", and `isGlobal` /
 * `globalInterceptor` "in `forRootAsync()` [...] go beside `useFactory`, not in what it returns".
 * `resolveModuleOptions()` (lib/core/options/lock-options.ts) reads the options it knows and
 * ignores every other name: a misspelt or borrowed option (`prefix` for `keyPrefix`, as other
 * lock libraries call it; `timeout`; `TTL`) starts the application with the default in its place,
 * without an error or a warning, so two applications that meant to keep their locks apart share
 * them under `lock:`; and an `isGlobal: true` returned by a `forRootAsync()` factory is dropped
 * just as silently (LockService then fails to resolve in other modules, far from the cause).
 */
describe('RedisLockModule options it does not know', () => {
  const redis = useRedis();

  async function start(module: ReturnType<typeof RedisLockModule.forRoot>): Promise<{ error?: unknown; logs: CapturedLogs; locks?: LockService; close(): Promise<void> }> {
    const logs = new CapturedLogs();
    try {
      const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(logs).compile();
      await moduleRef.init();
      return { logs, locks: moduleRef.get(LockService), close: () => moduleRef.close() };
    } catch (error) {
      return { error, logs, close: async () => undefined };
    }
  }

  it('forRoot({ prefix }) (keyPrefix misspelt) is refused naming "prefix", not run under the default prefix', async () => {
    const app = await start(RedisLockModule.forRoot({ redis: redisUrl(), prefix: 'billing:' } as never));
    try {
      if (app.locks) {
        await app.locks.acquire('nightly');
        // What happened instead: the lock is under the default prefix the option meant to replace.
        expect(await redis.keys('*{nightly}')).toEqual(['lock:{nightly}']);
      }
      expect(app.error).toBeInstanceOf(InvalidLockOptionsError);
      expect((app.error as InvalidLockOptionsError).option).toBe('prefix');
    } finally {
      await app.close();
    }
  });

  it('forRootAsync() whose factory returns isGlobal is refused naming "isGlobal", not silently local', async () => {
    const app = await start(RedisLockModule.forRootAsync({ useFactory: () => ({ redis: redisUrl(), isGlobal: true }) as never }));
    try {
      expect(app.error).toBeInstanceOf(InvalidLockOptionsError);
      expect((app.error as InvalidLockOptionsError).option).toBe('isGlobal');
    } finally {
      await app.close();
    }
  });
});
