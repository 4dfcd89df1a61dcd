import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review (forty-first session). `RedisLockModule.forRootAsync()` refuses a call without
 * a usable factory, and a `useClass` without `create()`, naming the method and the option
 * (test/lifecycle/forrootasync-without-factory-cryptic-error.spec.ts,
 * forrootasync-useclass-without-create-cryptic-error.spec.ts). The board's `registerAsync()`, built
 * on the same Nest builder, did neither: the settings given as they are to `register()`, a
 * `useFactory` that is not a function, or a settings class named as other modules name theirs
 * (`createBoardOptions()`) failed the startup with Nest's "can't resolve dependencies of the
 * REDIS_LOCK_BOARD_MODULE_OPTIONS (?)", "targetMetatype.metatype is not a function" or
 * "optionsFactory[self.factoryClassMethodKey] is not a function", naming neither the board nor
 * the option.
 */
@Injectable()
class BoardSettingsFactory {
  createBoardOptions() {
    return { allowForceRelease: true };
  }
}

const compile = (board: () => unknown): Promise<unknown> =>
  Promise.resolve()
    .then(() =>
      Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true }), board() as never] })
        .setLogger(new CapturedLogs())
        .compile(),
    )
    .then(
      (ref) => ref.close().then(() => 'started'),
      (error: unknown) => error,
    );

describe('RedisLockBoardModule.registerAsync() without a usable factory', () => {
  it.each([
    ['no useFactory, the settings themselves', () => RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], pageSize: 10 } as never), 'useFactory'],
    ['a useFactory that is not a function', () => RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], useFactory: { pageSize: 10 } } as never), 'useFactory'],
    ['a useClass without create()', () => RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], useClass: BoardSettingsFactory as never }), 'useClass'],
  ])('is refused naming registerAsync and the option: %s', async (_case, board, option) => {
    const error = await compile(board);
    // Before: Nest's UndefinedDependencyException or a bare TypeError.
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe(option);
    expect((error as Error).message).toContain(`RedisLockBoardModule.registerAsync: Option "${option}"`);
  });

  it('still starts with a class that has create()', async () => {
    @Injectable()
    class GoodFactory {
      create() {
        return { pageSize: 10 };
      }
    }
    expect(await compile(() => RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], useClass: GoodFactory }))).toBe('started');
  });
});
