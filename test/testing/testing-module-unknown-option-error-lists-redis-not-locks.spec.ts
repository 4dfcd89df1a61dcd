import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';

/**
 * Found by review (the testing module's option errors, docs/testing.md: "Options are those of
 * RedisLockModule.forRoot() without redis, validated the same way [...] plus locks, isGlobal and
 * globalInterceptor").
 *
 * A name that is no option is refused, and the message lists the options to pick from. For the
 * testing module that list is RedisLockModule's (lib/core/options/lock-options.ts, MODULE_OPTIONS):
 * it offers `redis`, which the testing module refuses, and leaves out `locks`, the testing
 * module's own option. A user who wrote `lock: store` (or `store: store`) for `locks` is told to
 * pick from a list without the option they meant, one entry of which fails in turn.
 */
describe('RedisLockTestingModule.forRoot() given a name that is no option', () => {
  const refusal = async (options: object): Promise<InvalidLockOptionsError> => {
    try {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot(options as never)] }).compile();
      await moduleRef.close();
    } catch (error) {
      return error as InvalidLockOptionsError;
    }
    throw new Error('compiled');
  };

  it('lists the testing module’s own options: locks, not redis', async () => {
    const error = await refusal({ lock: new InMemoryLocks() });
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect(error.option).toBe('lock');
    const listed = /its options are ([^)]*)\)/.exec(error.message)?.[1]?.split(', ') ?? [];
    expect(listed.length).toBeGreaterThan(0);
    // Before: "redis, keyPrefix, shutdownTimeout, ..., jobNamespace" — redis offered, locks missing.
    expect(listed).toContain('locks');
    expect(listed).not.toContain('redis');
  });
});
