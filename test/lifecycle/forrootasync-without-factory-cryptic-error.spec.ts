import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review. docs/configuration.md: "Every option is validated when the application
 * starts ... and a bad one fails with an InvalidLockOptionsError naming the option and the value,
 * and where it was given (`RedisLockModule.forRoot(): Option "ttl" must be ...`)".
 * `RedisLockModule.forRootAsync()` checks only that it got an object (lib/redis-lock.module.ts,
 * `checkOptionsObject`). Given no `useFactory`/`useClass`/`useExisting` (the module's options
 * passed as they are to forRoot, `forRootAsync({ redis })`, as a JavaScript caller or a config
 * spread can), or a `useFactory` that is not a function, the startup fails with Nest's
 * "Nest can't resolve dependencies of the REDIS_LOCK_MODULE_OPTIONS (?)" or a raw
 * `TypeError: targetMetatype.metatype is not a function`, neither naming forRootAsync() nor
 * useFactory.
 */
const compile = (options: unknown): Promise<unknown> =>
  Promise.resolve()
    .then(() => Test.createTestingModule({ imports: [RedisLockModule.forRootAsync(options as never)] }).setLogger(new CapturedLogs()).compile())
    .then(
      (ref) => ref.close(),
      (error: unknown) => error,
    );

describe('RedisLockModule.forRootAsync() without a usable factory', () => {
  it.each([
    ['no useFactory, the options themselves', { redis: redisUrl() }],
    ['useFactory that is not a function', { useFactory: { redis: redisUrl() } }],
  ])('is refused naming forRootAsync() and useFactory: %s', async (_case, options) => {
    const error = await compile(options);
    // Before: UndefinedDependencyException "Nest can't resolve dependencies of the REDIS_LOCK_MODULE_OPTIONS (?)",
    // or TypeError "targetMetatype.metatype is not a function".
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/RedisLockModule\.forRootAsync\(\).*useFactory/);
  });
});
