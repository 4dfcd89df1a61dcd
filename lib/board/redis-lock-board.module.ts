import { Inject, Module, Optional, type DynamicModule, type MiddlewareConsumer, type NestModule, type Type } from '@nestjs/common';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { BOARD_SETTINGS, type ResolvedBoardSettings } from './lock-board.controller.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import type { LockBoardAsyncOptions, LockBoardOptions } from './lock-board-options.interface.js';
import { BOARD_ROUTES, checkSettings, ConfigurableModuleClass, LOCK_BOARD_OPTIONS, ROUTE_OPTION_NAMES, SETTING_NAMES } from './lock-board.module-definition.js';
import { BoardShutdownMiddleware } from './lock-board.shutdown.js';
import { checkAsyncOptions, withCheckedOptionsFactory } from '../redis-lock.module-definition.js';

/**
 * A live lock board, opt-in: one page listing the locks held under the prefix (holder, since
 * when, ttl left, waiters, fencing token) and the semaphores in use (holders, permits used of
 * the limit, waiters), with a live feed of this process's lock events. It needs `guards` (or
 * the explicit `allowWithoutGuards`), and is read-only unless `allowForceRelease` is set.
 * `LockService` must be injectable where the board is imported
 * (`RedisLockModule.forRoot({ isGlobal: true })`).
 *
 * @example
 * ```ts
 * import { RedisLockBoardModule } from 'nestjs-redis-lock/board';
 *
 * @Module({
 *   imports: [
 *     RedisLockModule.forRoot({ redis: url, isGlobal: true }),
 *     RedisLockBoardModule.register({ path: 'admin/locks', guards: [AdminGuard] }),
 *     // or, with settings from configuration:
 *     RedisLockBoardModule.registerAsync({
 *       path: 'admin/locks',
 *       guards: [AdminGuard],
 *       imports: [ConfigModule],
 *       inject: [ConfigService],
 *       useFactory: (config: ConfigService) => ({ allowForceRelease: config.get('LOCK_BOARD_RELEASE') === 'yes' }),
 *     }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class RedisLockBoardModule extends ConfigurableModuleClass implements NestModule {
  /**
   * Refuses the class imported alone (`imports: [RedisLockBoardModule]`): it has no routes, so it
   * would start without a word and serve no board (a 404 where the admin looks for it).
   */
  constructor(
    @Optional() @Inject(BOARD_SETTINGS) settings?: ResolvedBoardSettings,
    @Optional() @Inject(BOARD_ROUTES) private readonly routes?: Type<unknown>,
  ) {
    super();
    if (settings === undefined) {
      throw new RedisLockError(
        'RedisLockBoardModule was imported as a class, which serves no board: import RedisLockBoardModule.register({ guards: [...] }) ' +
          '(or registerAsync()) instead.',
      );
    }
  }

  /** Nest calls it: answers the board's requests with `Connection: close` once the application is closing (see BoardShutdown). */
  configure(consumer: MiddlewareConsumer): void {
    if (this.routes !== undefined) consumer.apply(BoardShutdownMiddleware).forRoutes(this.routes);
  }

  /** A board with these options; checked here, so that a bad option throws at once. */
  static register(options: LockBoardOptions = {}): DynamicModule {
    const where = 'RedisLockBoardModule.register';
    if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, 'an object').within(where);
    // The route options are checked first (path, guards, imports), then the settings: the same
    // check runs again when the module starts; here it throws at the call.
    const definition = super.register(options);
    checkSettings(options, options.guards, where);
    return definition;
  }

  /** A board whose settings come from a factory, a class or an existing provider (see `LockBoardAsyncOptions`). */
  static registerAsync(options: LockBoardAsyncOptions): DynamicModule {
    const where = 'RedisLockBoardModule.registerAsync';
    // Before Nest's builder reads the route options off the object, and drops a setting given
    // beside the factory (an `allowedHosts` there left the board answering every host).
    checkAsyncOptions(options, where, {
      returned: SETTING_NAMES,
      beside: ROUTE_OPTION_NAMES,
      says: { what: "the board's settings", example: 'allowForceRelease', direct: 'register()' },
    });
    return withCheckedOptionsFactory(super.registerAsync(options), options, LOCK_BOARD_OPTIONS, where);
  }
}
