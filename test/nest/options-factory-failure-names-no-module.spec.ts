import { fileURLToPath } from 'node:url';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { RedisLockError, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { runRefusedStartup } from '../support/refused-startup.js';

const fixture = fileURLToPath(new URL('./fixtures/options-factory-fails.mjs', import.meta.url));

/**
 * Found by review. A `forRootAsync()` options factory that throws or rejects (a secret store
 * down, a config check failing) failed the startup with its own error, as it was: Nest's log
 * line ("[ExceptionHandler] Error: vault unreachable") named neither the lock module nor its
 * factory, in an application with a dozen async modules. The error now says where it came from
 * and keeps the factory's as its `cause`; and nothing is left open (the process exits).
 */
describe('a forRootAsync() options factory that throws or rejects', () => {
  useRedis();
  const vault = new Error('vault unreachable');

  it.each([
    ['RedisLockModule', 'rejects', () => RedisLockModule.forRootAsync({ useFactory: async () => Promise.reject(vault) })],
    ['RedisLockModule', 'throws', () => RedisLockModule.forRootAsync({ useFactory: () => { throw vault; } })],
    ['RedisLockModule', 'rejects in create()', () => RedisLockModule.forRootAsync({ useClass: class { create() { return Promise.reject(vault); } } })],
    ['RedisLockTestingModule', 'rejects', () => RedisLockTestingModule.forRootAsync({ useFactory: async () => Promise.reject(vault) })],
  ])('of %s, when it %s: the error names the module and keeps the cause', async (module, _, definition) => {
    const error: unknown = await Test.createTestingModule({ imports: [definition()] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        () => 'compiled',
        (e: unknown) => e,
      );
    // Before the fix: the factory's own Error, as it was.
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toContain(`${module}.forRootAsync()`);
    expect((error as Error).message).toContain('vault unreachable');
    expect((error as Error).cause).toBe(vault);
  });

  it.each(['rejects', 'throws'])('that %s beside a module with a connection of its own: the process exits on its own', { timeout: 60_000 }, async (fails) => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl(), FAILS: fails });
    expect(outcome.refused, outcome.stderr).toMatch(/^RedisLockError: RedisLockModule\.forRootAsync\(\): .*vault unreachable.* \[cause kept\]$/);
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
  });
});
