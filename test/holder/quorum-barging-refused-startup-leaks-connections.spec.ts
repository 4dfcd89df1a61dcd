import { fileURLToPath } from 'node:url';
import { runRefusedStartup } from '../support/refused-startup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const fixture = fileURLToPath(new URL('./fixtures/quorum-barging-startup.mjs', import.meta.url));

/**
 * Found by review. `fairness: 'barging'` in quorum mode is refused at startup with an
 * InvalidLockOptionsError, thrown by LockManager's constructor (lib/core/engine/lock-manager.ts),
 * which LockService's constructor calls right after `redisBackend()` opened the module's own
 * connections to every master (lib/lock.service.ts). Nothing closes them: Nest runs no shutdown
 * hook for an application whose init failed, so the ioredis connections stay open (and
 * reconnecting) and a process whose bootstrap catches the error never exits. The module's bar
 * (test/own-connection-leaked-when-startup-refuses-client-options.spec.ts): "A refused startup
 * must not leave a socket behind: the process has to be able to exit on its own."
 */
describe('quorum mode with fairness: barging, refused at startup (connections of its own)', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('leaves nothing open: the process exits on its own', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URLS: JSON.stringify(servers.map((server) => server.url)) });
    expect(outcome.refused, outcome.stderr).toMatch(/^InvalidLockOptionsError: .*fairness/);
    // Before: still running 15 s later, with three TCPSocketWrap (the module's ioredis connections) open.
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
  });
});
