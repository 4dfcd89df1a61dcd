import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (forty-first session). The commonest mistake with an async module:
 * `forRootAsync({ inject: [ConfigService], useFactory })` without `imports: [ConfigModule]` (or a
 * `useExisting` class no imported module provides). Nest then fails with "can't resolve
 * dependencies of the <options token> (?)", and the token's text was written for another mistake
 * (the module class imported alone): "Nest can't resolve dependencies of the nestjs-redis-lock:options
 * of RedisLockModule: import RedisLockModule.forRoot() or RedisLockModule.forRootAsync(), not the
 * class RedisLockModule alone (?) ... the argument ConfigService at index [0] ...", telling an
 * application that did call forRootAsync() to call it. The board's registerAsync() said
 * "REDIS_LOCK_BOARD_MODULE_OPTIONS (?)", naming neither the method nor what to do.
 */
@Injectable()
class ConfigService {
  get(): string {
    return redisUrl();
  }
}

const startupError = (module: () => unknown): Promise<string> =>
  Promise.resolve()
    .then(() => Test.createTestingModule({ imports: [module() as never] }).setLogger(new CapturedLogs()).compile())
    .then(
      (ref) => ref.close().then(() => 'started'),
      (error: unknown) => (error as Error).message.split('\n')[0]!,
    );

describe('an async module whose factory needs a provider its imports do not give', () => {
  it.each([
    ['RedisLockModule, inject', () => RedisLockModule.forRootAsync({ inject: [ConfigService], useFactory: (config: ConfigService) => ({ redis: config.get() }) }), 'RedisLockModule.forRootAsync()'],
    ['RedisLockModule, useExisting', () => RedisLockModule.forRootAsync({ useExisting: ConfigService as never }), 'RedisLockModule.forRootAsync()'],
    ['RedisLockTestingModule, inject', () => RedisLockTestingModule.forRootAsync({ inject: [ConfigService], useFactory: () => ({}) }), 'RedisLockTestingModule.forRootAsync()'],
    ['RedisLockBoardModule, inject', () => RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], inject: [ConfigService], useFactory: () => ({}) }), 'RedisLockBoardModule.registerAsync'],
  ])('%s: the error names the method and its imports, and does not say to call forRoot()', async (_case, module, method) => {
    const message = await startupError(module);
    // Before: "... dependencies of the nestjs-redis-lock:options of RedisLockModule: import RedisLockModule.forRoot() or ...",
    // or "... dependencies of the REDIS_LOCK_BOARD_MODULE_OPTIONS (?) ...".
    expect(message).toContain('ConfigService');
    expect(message).toContain(method);
    expect(message).toContain('"imports"');
    expect(message).not.toMatch(/import \w+\.forRoot\(\)|not the class/);
  });
});
