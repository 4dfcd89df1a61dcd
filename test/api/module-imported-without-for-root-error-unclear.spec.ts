import { Injectable, type DynamicModule, type Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review of what a newcomer meets first. `imports: [RedisLockModule]` (the class, not
 * `RedisLockModule.forRoot(...)`), and more naturally still `imports: [RedisLockTestingModule]`
 * in a test (it needs no Redis, so why options?), failed with Nest's own errors about the
 * options' internal token: "Nest cannot export a provider/module that is not a part of the
 * currently processed module (RedisLockModule). Please verify whether the exported
 * REDIS_LOCK_MODULE_OPTIONS is available", and "Nest can't resolve dependencies of the
 * InMemoryLocks (?) ... the argument "REDIS_LOCK_TESTING_MODULE_OPTIONS"": neither says to call
 * `forRoot()`. The error stays Nest's, raised before any provider is made (so before the
 * connection of a `forRoot()` imported beside it opens: a throwing options provider was tried, and
 * left that connection open after the failed startup); the token it names says what to do.
 */
describe('a lock module imported as a class, without forRoot()', () => {
  it.each<[string, Type<unknown> | DynamicModule, string]>([
    ['RedisLockModule', RedisLockModule, 'import RedisLockModule.forRoot() or RedisLockModule.forRootAsync(), not the class RedisLockModule alone'],
    ['RedisLockTestingModule', RedisLockTestingModule, 'import RedisLockTestingModule.forRoot() or RedisLockTestingModule.forRootAsync(), not the class RedisLockTestingModule alone'],
  ])('%s: the startup fails with an error that says to import forRoot()', async (_, module, remedy) => {
    @Injectable()
    class OrdersService {
      constructor(readonly locks: LockService) {}
    }
    const error = await Test.createTestingModule({ imports: [module], providers: [OrdersService] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        (moduleRef) => moduleRef.close().then(() => 'started'),
        (e: unknown) => e,
      );
    expect(`${(error as Error)?.constructor?.name}: ${(error as Error)?.message ?? error}`).toContain(remedy);
  });
});
