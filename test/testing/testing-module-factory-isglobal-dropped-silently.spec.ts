import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';

/**
 * Found by review of 0dc591a ("extras returned by a forRootAsync factory [...] are refused at
 * startup"). docs/testing.md: the testing module's options are "validated the same way", and
 * `forRootAsync()` takes them "as `RedisLockModule.forRootAsync()` does (`isGlobal` and
 * `globalInterceptor` beside `useFactory`)". RedisLockModule.forRootAsync() now refuses an
 * `isGlobal` returned by the factory; RedisLockTestingModule.forRootAsync() strips it
 * (moduleOptionsOf) and compiles: the module is silently not global, so a unit test of the same
 * factory passes or fails for another reason than production's startup error, and a provider of
 * another module that injects LockService fails far from the cause.
 */
describe('RedisLockTestingModule.forRootAsync() whose factory returns isGlobal', () => {
  it('is refused naming "isGlobal", as RedisLockModule.forRootAsync() refuses it', async () => {
    let error: unknown;
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [RedisLockTestingModule.forRootAsync({ useFactory: () => ({ isGlobal: true, ttl: '30s' }) as never })],
      }).compile();
      await moduleRef.close();
    } catch (caught) {
      error = caught;
    }
    // Before: undefined (compiled; isGlobal dropped without a word).
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('isGlobal');
    expect((error as Error).message).toContain('RedisLockTestingModule.forRootAsync()');
  });
  // Where another module's provider injects LockService, Nest resolves it before any factory runs
  // and fails first (UnknownDependenciesException), as with RedisLockModule: the module's
  // globality is decided when it is defined, so a factory can make it neither global nor refused.
});
