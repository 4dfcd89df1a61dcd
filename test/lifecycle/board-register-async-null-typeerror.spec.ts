import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';

/**
 * Found by review. docs/observability.md (the lock board): "Bad options stop the application at
 * startup with an `InvalidLockOptionsError` naming the option". `RedisLockBoardModule.register()`
 * and `RedisLockModule.forRootAsync()` refuse a missing options object so; `registerAsync()`
 * (lib/board/redis-lock-board.module.ts) hands it straight to Nest's ConfigurableModuleBuilder,
 * which fails with "TypeError: Cannot read properties of null (reading 'useExisting')", naming
 * neither the board nor the method.
 */
describe('RedisLockBoardModule.registerAsync() without an options object', () => {
  it('is refused with an InvalidLockOptionsError naming the method, as register() and forRootAsync() do', () => {
    const refusal = (call: () => unknown): { class: string; message: string } => {
      try {
        call();
        return { class: 'accepted', message: '' };
      } catch (error) {
        return { class: (error as Error).constructor.name, message: (error as Error).message };
      }
    };
    // The siblings, for comparison: both InvalidLockOptionsError naming the method.
    expect(refusal(() => RedisLockBoardModule.register(null as never)).class).toBe(InvalidLockOptionsError.name);
    expect(refusal(() => RedisLockModule.forRootAsync(null as never)).class).toBe(InvalidLockOptionsError.name);

    const board = refusal(() => RedisLockBoardModule.registerAsync(null as never));
    // Before the fix: { class: 'TypeError', message: "Cannot read properties of null (reading 'useExisting')" }.
    expect(board.class).toBe(InvalidLockOptionsError.name);
    expect(board.message).toContain('RedisLockBoardModule.registerAsync');
  });
});
