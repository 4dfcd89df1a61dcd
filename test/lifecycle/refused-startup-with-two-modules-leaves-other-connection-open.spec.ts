import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runRefusedStartup } from '../support/refused-startup.js';
import { redisUrl, useRedis } from '../support/redis.js';

const fixture = fileURLToPath(new URL('./fixtures/refused-startup-two-modules.mjs', import.meta.url));

/**
 * Review (decorators, s28). The bar of test/lifecycle/refused-startup-keeps-process-alive.spec.ts:
 * a startup the module refuses leaves nothing open, so a process whose bootstrap catches the error
 * exits on its own. `LockSchedulingExplorer.onModuleInit` (lib/scheduling/lock-scheduling.explorer.ts)
 * closes, on a refusal, its own module's LockService and the one of the module registered as
 * running the application's jobs (`RUNNING`). With two `RedisLockModule.forRoot()` (allowed:
 * docs/locks.md "Where") and no jobs, no module is registered: a refusal by the feature module's
 * explorer (here a `@Locked` ttl above its fenceRetention) closes the feature module's connection
 * only, and the global module's ioredis connection keeps the process alive.
 */
describe('a startup refused by one of two RedisLockModule instances', () => {
  useRedis();

  it('leaves no connection open: the process exits on its own', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl() });
    expect(outcome.refused, outcome.stderr).toMatch(/^InvalidLockOptionsError: @Locked on Reports\.build/);
    // Before: still running 15 s later, a TCPSocketWrap (the global module's connection) open.
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
  });
});
