import { Module, type DynamicModule } from '@nestjs/common';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import type { LockBoardOptions } from './lock-board-options.interface.js';
import { lockBoardController } from './lock-board.controller.js';

/**
 * A live lock board, opt-in: one page listing the locks held under the prefix (holder, since
 * when, ttl left, waiters, fencing token), with a live feed of this process's lock events.
 * Read-only unless `allowForceRelease` is set. Protect it with your own guards. `LockService`
 * must be injectable where the board is imported (`RedisLockModule.forRoot({ isGlobal: true })`).
 *
 * @example
 * ```ts
 * import { RedisLockBoardModule } from 'nestjs-redis-lock/board';
 *
 * @Module({
 *   imports: [
 *     RedisLockModule.forRoot({ redis: url, isGlobal: true }),
 *     RedisLockBoardModule.register({ path: 'admin/locks', guards: [AdminGuard] }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class RedisLockBoardModule {
  static register(options: LockBoardOptions = {}): DynamicModule {
    const where = 'RedisLockBoardModule.register';
    if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, 'an object').within(where);
    const path = options.path ?? 'locks';
    if (typeof path !== 'string' || !/^[A-Za-z0-9/_.~-]*$/.test(path)) {
      throw new InvalidLockOptionsError('path', path, 'a route path of letters, digits and / _ . ~ -').within(where);
    }
    const allowForceRelease = options.allowForceRelease ?? false;
    if (typeof allowForceRelease !== 'boolean') throw new InvalidLockOptionsError('allowForceRelease', allowForceRelease, 'a boolean').within(where);
    const pageSize = options.pageSize ?? 50;
    if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200) {
      throw new InvalidLockOptionsError('pageSize', pageSize, 'an integer from 1 to 200').within(where);
    }
    const guards = options.guards ?? [];
    if (!Array.isArray(guards)) throw new InvalidLockOptionsError('guards', guards, 'an array of guards').within(where);
    return {
      module: RedisLockBoardModule,
      imports: options.imports ?? [],
      controllers: [lockBoardController({ path, allowForceRelease, pageSize }, guards)],
    };
  }
}
