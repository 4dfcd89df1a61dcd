import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Every other option error of the library says where the option was given: `isGlobal` /
 * `globalInterceptor` ("RedisLockModule: ..."), `@Locked on Class.method: ...`,
 * `RedisLockBoardModule.register: ...`, `RedisLockMetricsModule.forRoot(): ...`,
 * `RedisLockHealthIndicator.isHealthy: ...`. The module's own options (`ttl`, `keyPrefix`,
 * `redis`...) are checked in `LockService`'s constructor (lib/lock.service.ts:43,
 * `resolveModuleOptions()` without `.within(...)`), so a bad `ttl` returned by a `forRootAsync()`
 * factory fails startup with `Option "ttl" must be ..., got -1.` and nothing else: not the module,
 * not whether it came from `forRoot()` or `forRootAsync()` (an application may import the
 * module more than once, a library of its own included), while the same mistake in a per-call
 * option reads the same. Nest's stack points into the injector, not at the call. The testing
 * module does it (docs/testing.md: "a bad factory result fails at compile with an error naming
 * `forRootAsync()` and the option": "RedisLockTestingModule.forRootAsync(): Option "ttl" ..."),
 * the module it stands in for does not.
 */
describe('RedisLockModule option errors', () => {
  async function startup(module: ReturnType<typeof RedisLockModule.forRoot>): Promise<unknown> {
    try {
      const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(new CapturedLogs()).compile();
      await moduleRef.close();
      return undefined;
    } catch (error) {
      return error;
    }
  }

  it.each([
    ['RedisLockModule.forRoot()', () => RedisLockModule.forRoot({ redis: redisUrl(), ttl: -1 })],
    ['RedisLockModule.forRootAsync()', () => RedisLockModule.forRootAsync({ useFactory: () => ({ redis: redisUrl(), ttl: -1 }) })],
  ])('a bad ttl given to %s is refused naming the option and the method', async (method, module) => {
    const error = await startup(module());
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('ttl');
    expect((error as Error).message).toContain(method.replace('()', ''));
  });
});
