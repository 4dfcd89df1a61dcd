/**
 * Defect: a bad `isGlobal` or `globalInterceptor` (options of `RedisLockModule.forRoot()` /
 * `forRootAsync()` and of `RedisLockTestingModule.forRoot()`), and a missing options object, are
 * refused with a plain `TypeError`, not with `InvalidLockOptionsError`.
 *
 * Promise: docs/configuration.md lists `isGlobal` and `globalInterceptor` in its options table
 * and says "Every option is validated when the application starts (or when the call is made)
 * and a bad one fails with an `InvalidLockOptionsError` naming the option and the value";
 * docs/locks.md "Errors": "All extend `RedisLockError`, so one `instanceof` tells lock trouble
 * from your own errors", `InvalidLockOptionsError`: "an option has a bad value (`option` names
 * it)". `resolveModuleOptions()` itself refuses a non-object with `InvalidLockOptionsError`
 * (option `options`).
 *
 * What happens: lib/redis-lock.module-definition.ts, `applyModuleExtras`, throws
 * `new TypeError('RedisLockModule: Option "isGlobal" must be true or false, ...')`; and
 * `forRoot(undefined)` never reaches `resolveModuleOptions()`: Nest's `ConfigurableModuleBuilder`
 * (`omitExtras`, called from `RedisLockModule.forRoot`, lib/redis-lock.module.ts) fails first with
 * "TypeError: Cannot convert undefined or null to object", which names neither the module nor
 * the option.
 */
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the module extras isGlobal and globalInterceptor', () => {
  it.each<[string, () => unknown, string]>([
    ['forRoot isGlobal', () => RedisLockModule.forRoot({ redis: 'redis://localhost:6379', isGlobal: 'yes' as never }), 'isGlobal'],
    ['forRoot globalInterceptor', () => RedisLockModule.forRoot({ redis: 'redis://localhost:6379', globalInterceptor: 1 as never }), 'globalInterceptor'],
    ['forRootAsync isGlobal', () => RedisLockModule.forRootAsync({ isGlobal: 'yes' as never, useFactory: () => ({ redis: 'redis://localhost:6379' }) }), 'isGlobal'],
    ['testing forRoot globalInterceptor', () => RedisLockTestingModule.forRoot({ globalInterceptor: 'no' as never }), 'globalInterceptor'],
  ])('%s: a bad value fails with InvalidLockOptionsError naming the option', (_name, build, option) => {
    const error = thrown(build);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error).toMatchObject({ option });
  });

  it('forRoot(undefined) fails with InvalidLockOptionsError (option "options"), as resolveModuleOptions() refuses a non-object', () => {
    const error = thrown(() => RedisLockModule.forRoot(undefined as never));
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect(error).toMatchObject({ option: 'options' });
  });
});
