import type { HttpAdapterHost } from '@nestjs/core';
import type { LockLogger } from './core/engine/lock-logger.js';

/**
 * Warns when a lock module is made while the HTTP server already listens: a module a route loaded
 * with `LazyModuleLoader`. Nest runs no lifecycle hook for such a module, at `app.close()` neither
 * (it closes the modules it started with), so no code of the module runs then: its locks stay
 * held and renewed, its connection open, and the process does not exit on its own. Saying so when
 * it is made is all the module can do. An application context has no server to tell the two
 * apart by: the warning comes only where the server listens.
 */
export function warnIfLoadedLazily(http: HttpAdapterHost | undefined, where: string | undefined, logger: LockLogger): void {
  if (http?.listening !== true) return;
  const module = where ?? 'RedisLockModule';
  // The class the application imported: the testing module's remedy is itself, not a module that needs Redis.
  const remedy = module.startsWith('RedisLockTestingModule') ? 'RedisLockTestingModule' : 'RedisLockModule';
  logger.warn(
    `${module} was loaded after the HTTP server started listening (by LazyModuleLoader): Nest runs no lifecycle hook of a module loaded so, ` +
      'and app.close() will neither give back the locks of its LockService nor close its connection (the process would not exit on its own). ' +
      `Import ${remedy} in the root module, with isGlobal: true, and use its LockService (or @Locked) in the lazily loaded module.`,
  );
}
