import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';

/**
 * docs/observability.md (lock board): "Bad options stop the application at startup with an
 * `InvalidLockOptionsError` naming the option." `boardDefinition()`
 * (lib/board/lock-board.module-definition.ts) checks only that `guards` is an array, then hands
 * its entries to Nest's `UseGuards()` (lib/board/lock-board.controller.ts). An entry that is not a
 * guard (an `undefined`, which is what a circular import makes of a guard class, the most common
 * way to get it wrong; a string) fails inside Nest with `InvalidDecoratorItemException: Invalid
 * guard passed to @UseGuards() decorator (LockBoardController).`: a decorator the application
 * never wrote, on a class it has never heard of, naming neither the method nor `guards[0]`.
 */
describe('RedisLockBoardModule with an entry of guards that is not a guard', () => {
  function thrown(fn: () => unknown): unknown {
    try {
      fn();
      return undefined;
    } catch (error) {
      return error;
    }
  }

  it.each([
    ['register', () => RedisLockBoardModule.register({ guards: [undefined as never], allowWithoutGuards: true })],
    ['registerAsync', () => RedisLockBoardModule.registerAsync({ guards: ['AdminGuard' as never], useFactory: () => ({}) })],
  ])('%s() refuses it with InvalidLockOptionsError naming guards[0] and the method', (method, call) => {
    const error = thrown(call);
    expect({ class: (error as Error)?.constructor?.name, message: (error as Error)?.message }).toMatchObject({ class: 'InvalidLockOptionsError' });
    expect((error as InvalidLockOptionsError).option).toBe('guards[0]');
    expect((error as Error).message).toContain(`RedisLockBoardModule.${method}`);
  });
});
