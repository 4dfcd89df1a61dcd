import { fileURLToPath } from 'node:url';
import { runRefusedStartup } from '../support/refused-startup.js';
import { describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';

const fixture = fileURLToPath(new URL('./fixtures/refused-startup.mjs', import.meta.url));

/**
 * Found by review. The module refuses a bad application at startup (docs/jobs-and-leaders.md:
 * "The startup fails with a `DuplicateLockKeyError` naming both when two jobs or elections would
 * use one lock"; likewise a job key no lock can have, a job ttl above fenceRetention). Those
 * checks run in `LockSchedulingExplorer.onModuleInit` (lib/scheduling/lock-scheduling.explorer.ts),
 * after `LockService`'s constructor has opened the module's own Redis connection
 * (lib/lock.service.ts -> redisBackend). Nest runs no shutdown hook for an application whose
 * init failed, and `NestFactory.createApplicationContext()` (or `create()` + `init()`) rejects
 * without handing the application out, so nobody can close it: the connection stays open (and
 * reconnecting) and a process whose bootstrap catches the error and sets `process.exitCode`
 * never exits. The bar the module sets itself (test/own-connection-leaked-when-startup-refuses-
 * client-options.spec.ts): "A refused startup must not leave a socket behind: the process has to
 * be able to exit on its own."
 */
describe('a startup the module refuses (DuplicateLockKeyError) with a connection of its own', () => {
  useRedis();

  it('leaves nothing open: the process exits on its own', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl() });
    expect(outcome.refused, outcome.stderr).toMatch(/^DuplicateLockKeyError: /);
    // Before the fix: still running 15 s later, with a TCPSocketWrap (the module's ioredis connection) open.
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
  });
});
