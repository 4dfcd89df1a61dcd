import { fileURLToPath } from 'node:url';
import { runRefusedStartup } from '../support/refused-startup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const fixture = fileURLToPath(new URL('./fixtures/bad-job-namespace-startup.mjs', import.meta.url));

/**
 * Found by review of a52c85c ("a LockManager refused at construction closes the connections its
 * backend opened") and 0dc591a ("the module's option errors name forRoot()/forRootAsync()").
 * The module option `jobNamespace` is not checked by resolveModuleOptions() (which LockService
 * runs before it connects) but by JobLockOrchestrator's constructor (checkJobNamespace), which
 * Nest runs after LockService's, whose backend has already connected. The refusal therefore:
 * (1) leaves the module's own connection open (Nest runs no shutdown hook for an application
 * whose init failed), so a process whose bootstrap catches the error never exits, the defect
 * a52c85c fixed for `fairness: 'barging'` in quorum mode; (2) does not say where the option was
 * given (no "RedisLockModule.forRoot(): "), unlike every other module option since 0dc591a.
 */
describe('RedisLockModule.forRoot with a jobNamespace it refuses (a connection of its own)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('is refused naming forRoot() and leaves nothing open: the process exits on its own', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: server.url });
    expect(outcome.refused, outcome.stderr).toMatch(/^InvalidLockOptionsError: .*jobNamespace/);
    // Before: still running 15 s later, with the module's ioredis connection (TCPSocketWrap) open.
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
    // Before: 'InvalidLockOptionsError: Option "jobNamespace" must be ...' (no method named).
    expect(outcome.refused).toMatch(/^InvalidLockOptionsError: RedisLockModule\.forRoot\(\): Option "jobNamespace"/);
  });
});
