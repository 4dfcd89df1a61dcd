// docs/testing.md:246-249: "`RedisLockTestingModule.forRootAsync({ imports, inject, useFactory })`
// takes them from a factory ...; a bad factory result fails at compile with an error naming
// `forRootAsync()` and the option."
//
// What happens: only the two options the testing module checks itself (`locks`, `redis`) are
// named with `RedisLockTestingModule.forRootAsync()` (moduleOptionsOf -> checkTestingOptions,
// lib/testing/redis-lock-testing.module.ts:77-93). Every other bad option of the factory's
// result (`ttl`, `waitTimeout`, `fenceRetention`, `keyPrefix`, ...) is caught later, by
// `LockService`'s constructor (resolveModuleOptions, lib/lock.service.ts:29 ->
// lib/core/options/lock-options.ts:70), whose InvalidLockOptionsError is never given the
// `.within('RedisLockTestingModule.forRootAsync()')` the others get: the message is
// `Option "ttl" must be ...`, which does not say that the factory of forRootAsync() is where it came
// from. (test/testing-module.spec.ts checks only the class for `ttl: 0`.)
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../lib/testing/index.js';
import { CapturedLogs } from './support/lock-app.js';

const refused = (options: object): Promise<unknown> =>
  Test.createTestingModule({ imports: [RedisLockTestingModule.forRootAsync({ useFactory: () => ({ locks: new InMemoryLocks(), ...options }) as never })] })
    .setLogger(new CapturedLogs())
    .compile()
    .then(
      () => undefined,
      (error: unknown) => error,
    );

describe('RedisLockTestingModule.forRootAsync(): a bad factory result', () => {
  it('names forRootAsync() for "locks" (as documented)', async () => {
    const error = await refused({ locks: {} });
    expect(String(error)).toMatch(/RedisLockTestingModule\.forRootAsync\(\): Option "locks"/);
  });

  it.each([
    ['ttl', { ttl: 0 }],
    ['waitTimeout', { waitTimeout: -1 }],
    ['keyPrefix', { keyPrefix: 'a{b' }],
    ['fenceRetention', { fenceRetention: 1_000 }],
  ])('names forRootAsync() and the option for a bad "%s"', async (option, options) => {
    const error = await refused(options);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe(option);
    expect((error as Error).message).toMatch(/forRootAsync\(\)/);
  });
});
