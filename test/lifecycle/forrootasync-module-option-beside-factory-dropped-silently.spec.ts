import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (forty-first session). docs/configuration.md: a name that is no option, or an
 * extra returned by a `forRootAsync()` factory, is refused at startup naming it. The other way
 * round was not: a module option given beside `useFactory` instead of returned by it
 * (`forRootAsync({ useFactory, keyPrefix: 'billing:' })`, from a config spread or JavaScript) was
 * dropped without a word by Nest's builder, which reads only its own names and the extras. The
 * application started with the default `lock:` prefix, sharing every lock with the other
 * applications on that Redis it was meant to be kept apart from; a misspelt name beside
 * `useFactory` was dropped the same way.
 */
/** The module made and compiled: 'started', or what either threw (forRootAsync() checks its options at the call). */
const compile = (module: () => unknown): Promise<unknown> =>
  Promise.resolve()
    .then(() => Test.createTestingModule({ imports: [module() as never] }).setLogger(new CapturedLogs()).compile())
    .then(
      (ref) => ref.close().then(() => 'started'),
      (error: unknown) => error,
    );

describe('forRootAsync() with an option beside useFactory', () => {
  it.each([
    ['RedisLockModule', () => RedisLockModule.forRootAsync({ isGlobal: true, useFactory: () => ({ redis: redisUrl() }), keyPrefix: 'billing:' } as never), 'RedisLockModule.forRootAsync()'],
    ['RedisLockTestingModule', () => RedisLockTestingModule.forRootAsync({ useFactory: () => ({}), keyPrefix: 'billing:' } as never), 'RedisLockTestingModule.forRootAsync()'],
  ])('%s: a module option is refused naming it and where it goes', async (_module, module, method) => {
    // Before: 'started', with the locks under "lock:".
    const error = await compile(module);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('keyPrefix');
    expect((error as Error).message).toMatch(new RegExp(`^${method.replace(/[.()]/g, '\\$&')}: Option "keyPrefix" .*returned by useFactory`));
  });

  it('refuses a name that is no option, naming it', async () => {
    const error = await compile(() => RedisLockModule.forRootAsync({ useFactory: () => ({ redis: redisUrl() }), isGlobl: true } as never));
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^RedisLockModule\.forRootAsync\(\): Option "isGlobl" .*no option/);
  });

  it('still starts with the extras, imports and inject beside useFactory', async () => {
    expect(
      await compile(() => RedisLockModule.forRootAsync({ isGlobal: true, globalInterceptor: false, imports: [], inject: [], useFactory: () => ({ redis: redisUrl() }) })),
    ).toBe('started');
  });
});
