import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (thirty-seventh session). `forRootAsync({ useClass })` (or `useExisting`) takes
 * the options from the class's `create()`, the method name Nest's ConfigurableModuleBuilder calls
 * by default. A class without one (named as other modules name theirs, `createTypeOrmOptions()`
 * style, or a `ConfigService` given as it is) failed the startup with Nest's bare
 * `TypeError: optionsFactory[self.factoryClassMethodKey] is not a function`, naming neither the
 * module, the option nor even `create()`, where `forRootAsync()` without a factory at all is
 * refused naming both
 * (test/lifecycle/forrootasync-without-factory-cryptic-error.spec.ts).
 */
@Injectable()
class LockOptionsFactory {
  // The TypeORM / Mongoose naming, not the builder's `create()`.
  createRedisLockOptions() {
    return { redis: redisUrl() };
  }
}

@Module({ providers: [LockOptionsFactory], exports: [LockOptionsFactory] })
class OptionsModule {}

const compile = (module: unknown): Promise<unknown> =>
  Promise.resolve()
    .then(() => Test.createTestingModule({ imports: [module as never] }).setLogger(new CapturedLogs()).compile())
    .then(
      (ref) => ref.close().then(() => 'started'),
      (error: unknown) => error,
    );

describe('forRootAsync() with a class that has no create()', () => {
  it.each([
    ['RedisLockModule, useClass', () => RedisLockModule.forRootAsync({ useClass: LockOptionsFactory as never }), 'RedisLockModule.forRootAsync()', 'useClass'],
    ['RedisLockModule, useExisting', () => RedisLockModule.forRootAsync({ imports: [OptionsModule], useExisting: LockOptionsFactory as never }), 'RedisLockModule.forRootAsync()', 'useExisting'],
    ['RedisLockTestingModule, useClass', () => RedisLockTestingModule.forRootAsync({ useClass: LockOptionsFactory as never }), 'RedisLockTestingModule.forRootAsync()', 'useClass'],
  ])('is refused naming the method and the option: %s', async (_, module, method, option) => {
    const error = await compile(module());
    // Before: TypeError "optionsFactory[self.factoryClassMethodKey] is not a function".
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe(option);
    expect((error as Error).message).toContain(`${method}: Option "${option}" must be a class with a create() method`);
  });

  it('still starts with a class that has create()', async () => {
    @Injectable()
    class GoodFactory {
      create() {
        return { redis: redisUrl() };
      }
    }
    expect(await compile(RedisLockModule.forRootAsync({ useClass: GoodFactory }))).toBe('started');
  });
});
